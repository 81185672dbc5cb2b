import { DeleteObjectCommand, ListObjectsCommand, S3Client } from "@aws-sdk/client-s3"
import { Duration, Option } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, TEST_KEY, type TestGateway, useGateway } from "./support/gateway.js"
import { base64, pdf, png } from "./support/mediaSamples.js"
import { unavailable } from "./support/servers/availability.js"

/**
 * The gateway with its media in S3 (`MEDIA_URL=s3://…`, s3rver from the globalSetup), the
 * credentials from the AWS environment variables as in production: what a session sends and
 * receives is kept in the bucket and streamed back from it by `GET …/media`.
 */

const skip = unavailable("s3", "the gateway on S3 (s3-gateway.test.ts)")
const env = process.env
const prefix = `gateway-${randomUUID()}`
const mediaUrl = skip === undefined
  ? `s3://${env["TEST_S3_BUCKET"]}/${prefix}?region=${env["TEST_S3_REGION"]}&endpoint=${encodeURIComponent(env["TEST_S3_ENDPOINT"]!)}&forcePathStyle=true`
  : "s3://unavailable"

if (skip === undefined) {
  // this file's own worker process: the gateway's S3 client reads them like the SDK does anywhere
  env["AWS_ACCESS_KEY_ID"] = env["TEST_S3_ACCESS_KEY_ID"]
  env["AWS_SECRET_ACCESS_KEY"] = env["TEST_S3_SECRET_ACCESS_KEY"]
}

const download = async (gateway: TestGateway, route: string) => {
  const response = await fetch(`${gateway.baseUrl}${route}`, { headers: { "x-api-key": TEST_KEY } })
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) }
}

describe.skipIf(skip !== undefined)("the gateway with MEDIA_URL=s3://…", () => {
  const gateway = useGateway({
    media: { url: Option.some(mediaUrl), maxBytes: 32 * 1024 * 1024, allowPrivate: true, fetchTimeout: Duration.seconds(5), incoming: "store", keepRevoked: false }
  })
  let client: S3Client
  let alpha: { id: string; phone: string }
  let beta: { id: string; phone: string }
  beforeAll(async () => {
    client = new S3Client({ region: env["TEST_S3_REGION"]!, endpoint: env["TEST_S3_ENDPOINT"]!, forcePathStyle: true })
    alpha = await readySession(gateway(), "s3-alpha")
    beta = await readySession(gateway(), "s3-beta")
  })
  afterAll(() => client?.destroy())

  const objectsUnder = async (under: string) =>
    ((await client.send(new ListObjectsCommand({ Bucket: env["TEST_S3_BUCKET"]!, Prefix: `${prefix}/${under}` }))).Contents ?? [])
      .map((object) => object.Key!.slice(prefix.length + 1))
      .sort()

  const inbox = (sessionId: string, count: number) =>
    eventually(() => gateway().call("GET", `/api/sessions/${sessionId}/messages?direction=in`), (r) => r.body.data.length >= count)
      .then((r) => r.body.data[0])

  it("keeps a sent image in the bucket and streams the same bytes back, on both sides", async () => {
    const image = png("kept in S3")
    const sent = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-image`, {
      body: { chatId: `+${beta.phone}`, media: { data: base64(image) } }
    })
    expect(sent.status).toBe(201)
    expect(await objectsUnder(`${alpha.id}/`)).toEqual([`${alpha.id}/${sent.body.messageId}`])

    const mine = await download(gateway(), `/api/sessions/${alpha.id}/messages/${sent.body.messageId}/media`)
    expect(mine.status).toBe(200)
    expect(mine.headers.get("content-type")).toBe("image/png")
    expect(mine.headers.get("content-length")).toBe(String(image.length))
    expect(mine.bytes.equals(Buffer.from(image))).toBe(true)

    const theirs = await inbox(beta.id, 1)
    const received = await download(gateway(), `/api/sessions/${beta.id}/messages/${theirs.id}/media`)
    expect(received.bytes.equals(Buffer.from(image))).toBe(true)
    expect(await objectsUnder(`${beta.id}/`)).toEqual([`${beta.id}/${theirs.id}`])
  })

  it("streams a large document back whole, with its length and name", async () => {
    const document = new Uint8Array(Buffer.concat([Buffer.from(pdf("large")), randomBytes(20 * 1024 * 1024)]))
    const form = new FormData()
    form.append("chatId", beta.phone)
    form.append("file", new Blob([document], { type: "application/pdf" }), "large report.pdf")
    const sent = await fetch(`${gateway().baseUrl}/api/sessions/${alpha.id}/messages/send-document`, { method: "POST", headers: { "x-api-key": TEST_KEY }, body: form })
    expect(sent.status).toBe(201)
    const { messageId } = await sent.json() as { messageId: string }

    const response = await fetch(`${gateway().baseUrl}/api/sessions/${alpha.id}/messages/${messageId}/media`, { headers: { "x-api-key": TEST_KEY } })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-length")).toBe(String(document.length))
    expect(response.headers.get("content-disposition")).toContain("large%20report.pdf")
    // read as it arrives: more than one piece
    const reader = response.body!.getReader()
    const pieces: Array<Uint8Array> = []
    for (let next = await reader.read(); !next.done; next = await reader.read()) pieces.push(next.value)
    expect(pieces.length).toBeGreaterThan(1)
    expect(Buffer.concat(pieces).equals(Buffer.from(document))).toBe(true)
  }, 60_000)

  it("answers 404 MEDIA_NOT_FOUND when the object is gone from the bucket, and a deleted session takes its media along", async () => {
    const sent = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-image`, {
      body: { chatId: `+${beta.phone}`, media: { data: base64(png("short-lived")) } }
    })
    expect(sent.status).toBe(201)
    await inbox(beta.id, 3)
    expect((await objectsUnder(`${alpha.id}/`)).length).toBe(3)

    const removed = await gateway().call("DELETE", `/api/sessions/${alpha.id}`)
    expect(removed.status).toBe(204)
    await eventually(() => objectsUnder(`${alpha.id}/`), (keys) => keys.length === 0)
    expect((await objectsUnder(`${beta.id}/`)).length).toBe(3)

    const theirs = await inbox(beta.id, 3)
    await client.send(new DeleteObjectCommand({ Bucket: env["TEST_S3_BUCKET"]!, Key: `${prefix}/${beta.id}/${theirs.id}` }))
    const gone = await gateway().call("GET", `/api/sessions/${beta.id}/messages/${theirs.id}/media`)
    expect(gone.status).toBe(404)
    expect(gone.body.code).toBe("MEDIA_NOT_FOUND")
  })
})
