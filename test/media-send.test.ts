import { Duration, Effect, Option } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { MediaSettings } from "../src/domain/Settings.js"
import { eventually, readySession, TEST_KEY, type TestGateway, useGateway } from "./support/gateway.js"
import { base64, jpeg, mp4, opus, pdf, png } from "./support/mediaSamples.js"

/** Media sends over real HTTP, between two sandbox sessions of one gateway. */

/** Small limits, so a test can cross them; private URLs allowed unless a test turns the guard on. */
const mediaSettings = (overrides: Partial<MediaSettings> = {}): MediaSettings => ({
  url: Option.none(),
  maxBytes: 64 * 1024,
  allowPrivate: true,
  fetchTimeout: Duration.seconds(5),
  incoming: "store",
  keepRevoked: false,
  ...overrides
})

/** The bytes and headers of a response, whatever its type. */
const download = async (gateway: TestGateway, route: string) => {
  const response = await fetch(`${gateway.baseUrl}${route}`, { headers: { "x-api-key": TEST_KEY } })
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

const multipart = async (gateway: TestGateway, route: string, fields: Record<string, string>, file?: { bytes: Uint8Array; name: string; type: string }) => {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  if (file !== undefined) form.append("file", new Blob([file.bytes], { type: file.type }), file.name)
  const response = await fetch(`${gateway.baseUrl}${route}`, { method: "POST", headers: { "x-api-key": TEST_KEY }, body: form })
  return { status: response.status, body: await response.json() as any }
}

/** The recipient's copy of the newest message it received, once it has arrived. */
const received = (gateway: TestGateway, sessionId: string, count: number) =>
  eventually(
    () => gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=in`),
    (r) => r.body.data.length >= count
  ).then((r) => r.body.data[0])

describe("media sends", () => {
  const gateway = useGateway({ media: mediaSettings() })
  let alpha: { id: string; phone: string }
  let beta: { id: string; phone: string }
  let inbox = 0
  beforeAll(async () => {
    alpha = await readySession(gateway(), "media-alpha")
    beta = await readySession(gateway(), "media-beta")
  })
  const send = (kind: string, body: unknown) => gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-${kind}`, { body })

  it("sends an image as base64 JSON: stored, delivered, and the same bytes come back on both sides", async () => {
    const image = png("an image")
    const sent = await send("image", { chatId: `+${beta.phone}`, media: { data: base64(image) }, caption: "look" })
    expect(sent.status).toBe(201)
    expect(sent.body).toMatchObject({ messageId: expect.any(String), chatId: `${beta.phone}@c.us`, status: "pending" })

    const mine = await gateway().call("GET", `/api/sessions/${alpha.id}/messages/${sent.body.messageId}`)
    expect(mine.body).toMatchObject({ type: "image", caption: "look", text: null, media: { mimetype: "image/png", size: image.length, ptt: false } })
    const back = await download(gateway(), `/api/sessions/${alpha.id}/messages/${sent.body.messageId}/media`)
    expect(back.status).toBe(200)
    expect(back.headers.get("content-type")).toBe("image/png")
    expect(Buffer.from(back.bytes).equals(Buffer.from(image))).toBe(true)

    const theirs = await received(gateway(), beta.id, ++inbox)
    expect(theirs).toMatchObject({ type: "image", caption: "look", fromMe: false, media: { mimetype: "image/png", size: image.length } })
    const delivered = await download(gateway(), `/api/sessions/${beta.id}/messages/${theirs.id}/media`)
    expect(Buffer.from(delivered.bytes).equals(Buffer.from(image))).toBe(true)
    await eventually(() => gateway().call("GET", `/api/sessions/${alpha.id}/messages/${sent.body.messageId}`), (r) => r.body.status === "delivered")
  })

  it("sends a document as multipart with its name, served back with a Content-Disposition", async () => {
    const document = pdf("a report")
    const sent = await multipart(gateway(), `/api/sessions/${alpha.id}/messages/send-document`, { chatId: beta.phone, caption: "Q3" }, {
      bytes: document,
      name: "Q3 report.pdf",
      type: "application/octet-stream"
    })
    expect(sent.status).toBe(201)
    const theirs = await received(gateway(), beta.id, ++inbox)
    // The declared type was generic; the bytes say PDF.
    expect(theirs).toMatchObject({ type: "document", caption: "Q3", media: { mimetype: "application/pdf", filename: "Q3 report.pdf" } })
    const served = await download(gateway(), `/api/sessions/${beta.id}/messages/${theirs.id}/media`)
    expect(served.headers.get("content-disposition")).toContain("Q3%20report.pdf")
    expect(Buffer.from(served.bytes).equals(Buffer.from(document))).toBe(true)
  })

  it("sends a voice note (send-audio with ptt) and a video", async () => {
    expect((await send("audio", { chatId: beta.phone, media: { data: base64(opus()) }, ptt: true })).status).toBe(201)
    const voice = await received(gateway(), beta.id, ++inbox)
    expect(voice).toMatchObject({ type: "audio", media: { ptt: true, mimetype: expect.stringMatching(/^audio\/ogg/) } })

    const video = await multipart(gateway(), `/api/sessions/${alpha.id}/messages/send-video`, { chatId: beta.phone }, { bytes: mp4(), name: "clip.mp4", type: "video/mp4" })
    expect(video.status).toBe(201)
    expect(await received(gateway(), beta.id, ++inbox)).toMatchObject({ type: "video", media: { mimetype: "video/mp4" } })
  })

  it("fetches media from a URL", async () => {
    const image = jpeg("from a url")
    const server = http.createServer((_, response) => response.writeHead(200, { "content-type": "image/jpeg" }).end(image))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pictures/cat.jpg`
      const sent = await send("image", { chatId: beta.phone, media: { url } })
      expect(sent.status).toBe(201)
      const back = await download(gateway(), `/api/sessions/${alpha.id}/messages/${sent.body.messageId}/media`)
      expect(Buffer.from(back.bytes).equals(Buffer.from(image))).toBe(true)
      expect((await received(gateway(), beta.id, ++inbox)).media).toMatchObject({ mimetype: "image/jpeg", filename: "cat.jpg" })
    } finally {
      server.close()
    }
  })

  it("media accepted while the session is disconnected goes out after the reconnect, bytes intact", async () => {
    const network = gateway().network
    await Effect.runPromise(network.refuseConnections(alpha.id, "400 millis"))
    await Effect.runPromise(network.dropConnection(alpha.id))
    await eventually(() => gateway().call("GET", `/api/sessions/${alpha.id}`), (r) => r.body.status === "disconnected")
    const image = png("sent while away")
    const sent = await send("image", { chatId: beta.phone, media: { data: base64(image) } })
    expect(sent.status).toBe(201)
    const theirs = await received(gateway(), beta.id, ++inbox)
    const delivered = await download(gateway(), `/api/sessions/${beta.id}/messages/${theirs.id}/media`)
    expect(Buffer.from(delivered.bytes).equals(Buffer.from(image))).toBe(true)
  })

  it("an echo contact listens to a voice note: the status reaches played (ack 4)", async () => {
    const sent = await send("audio", { chatId: "15550004321", media: { data: base64(opus("listen")) }, ptt: true })
    const played = await eventually(
      () => gateway().call("GET", `/api/sessions/${alpha.id}/messages/${sent.body.messageId}`),
      (r) => r.body.status === "played"
    )
    expect(played.body.ack).toBe(4)
    expect(played.body.statusHistory.map((h: { status: string }) => h.status)).toEqual(["pending", "sent", "delivered", "read", "played"])
  })

  it("an echo contact answers with the same media", async () => {
    const image = png("echo me")
    expect((await send("image", { chatId: "15550001234", media: { data: base64(image) } })).status).toBe(201)
    const echo = await eventually(
      () => gateway().call("GET", `/api/sessions/${alpha.id}/messages?direction=in&chatId=15550001234@c.us`),
      (r) => r.body.data.length === 1
    )
    const back = await download(gateway(), `/api/sessions/${alpha.id}/messages/${echo.body.data[0].id}/media`)
    expect(Buffer.from(back.bytes).equals(Buffer.from(image))).toBe(true)
  })

  it("refuses what it cannot send in the error shape of the contract, and stores nothing", async () => {
    const before = (await gateway().call("GET", `/api/sessions/${alpha.id}/messages?direction=out`)).body.data.length
    const tooBig = new Uint8Array(64 * 1024 + 1)
    tooBig.set(png())
    const cases: Array<[Promise<{ status: number; body: any }>, number, string]> = [
      [send("image", { chatId: beta.phone, media: { data: base64(tooBig) } }), 413, "PAYLOAD_TOO_LARGE"],
      [multipart(gateway(), `/api/sessions/${alpha.id}/messages/send-image`, { chatId: beta.phone }, { bytes: tooBig, name: "big.png", type: "image/png" }), 413, "PAYLOAD_TOO_LARGE"],
      [send("video", { chatId: beta.phone, media: { data: base64(png()) } }), 415, "UNSUPPORTED_MEDIA_TYPE"],
      [send("image", { chatId: beta.phone, media: { data: base64(pdf()) } }), 415, "UNSUPPORTED_MEDIA_TYPE"],
      [send("image", { chatId: beta.phone, media: { data: "not base64 at all!" } }), 400, "VALIDATION_FAILED"],
      [send("image", { chatId: "nobody", media: { data: base64(png()) } }), 400, "VALIDATION_FAILED"],
      [send("image", { chatId: beta.phone }), 400, "VALIDATION_FAILED"],
      [send("image", { chatId: beta.phone, media: { url: "file:///etc/passwd" } }), 400, "VALIDATION_FAILED"],
      [multipart(gateway(), `/api/sessions/${alpha.id}/messages/send-image`, { chatId: beta.phone }), 400, "VALIDATION_FAILED"],
      [gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-image`, { raw: "chatId=1", headers: { "content-type": "text/plain" } }), 415, "UNSUPPORTED_MEDIA_TYPE"],
      [gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-image`, { raw: "{not json" }), 400, "VALIDATION_FAILED"],
      [send("image", { chatId: beta.phone, media: { data: base64(png()) }, quotedMessageId: "no-such-message" }), 404, "MESSAGE_NOT_FOUND"]
    ]
    for (const [response, status, code] of cases) {
      const { body, status: actual } = await response
      expect({ actual, code: body.code, message: body.message }).toMatchObject({ actual: status, code })
      expect(body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String) })
    }
    const after = (await gateway().call("GET", `/api/sessions/${alpha.id}/messages?direction=out`)).body.data.length
    expect(after).toBe(before)
  })

  it("GET …/media: 404 for a message without media and for an unknown message", async () => {
    const text = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: beta.phone, text: "no media" } })
    const none = await gateway().call("GET", `/api/sessions/${alpha.id}/messages/${text.body.messageId}/media`)
    expect([none.status, none.body.code]).toEqual([404, "MEDIA_NOT_FOUND"])
    const unknown = await gateway().call("GET", `/api/sessions/${alpha.id}/messages/0190c0de-0000-7000-8000-000000000000/media`)
    expect([unknown.status, unknown.body.code]).toEqual([404, "MESSAGE_NOT_FOUND"])
    inbox++
  })
})

describe("deleting a session", () => {
  const gateway = useGateway({ media: mediaSettings() })

  it("removes its media with it", async () => {
    const alpha = await readySession(gateway(), "delete-alpha")
    const sent = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-image`, { body: { chatId: "15550001111", media: { data: base64(png()) } } })
    expect(sent.status).toBe(201)
    const folder = path.join(gateway().settings.dataDir, "media", alpha.id)
    expect(fs.readdirSync(folder)).toContain(sent.body.messageId)
    expect((await gateway().call("DELETE", `/api/sessions/${alpha.id}`)).status).toBe(204)
    expect(fs.existsSync(folder)).toBe(false)
  })
})

describe("media sends with INCOMING_MEDIA=skip and the SSRF guard on", () => {
  const gateway = useGateway({ media: mediaSettings({ incoming: "skip", allowPrivate: false }) })
  let server: http.Server
  let requests = 0
  beforeAll(async () => {
    server = http.createServer((_, response) => void (requests++, response.writeHead(200).end(png())))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  })
  afterAll(() => void server.close())

  it("keeps what received media is, not its bytes", async () => {
    const alpha = await readySession(gateway(), "skip-alpha")
    const beta = await readySession(gateway(), "skip-beta")
    const sent = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-image`, { body: { chatId: beta.phone, media: { data: base64(png()) } } })
    expect(sent.status).toBe(201)
    const theirs = await received(gateway(), beta.id, 1)
    expect(theirs).toMatchObject({ type: "image", media: { mimetype: "image/png" } })
    const media = await gateway().call("GET", `/api/sessions/${beta.id}/messages/${theirs.id}/media`)
    expect([media.status, media.body.code]).toEqual([404, "MEDIA_NOT_FOUND"])
  })

  it("refuses a media URL on a loopback address without connecting to it", async () => {
    const alpha = await readySession(gateway(), "ssrf-alpha")
    const port = (server.address() as AddressInfo).port
    for (const url of [`http://127.0.0.1:${port}/x.png`, `http://localhost:${port}/x.png`, `http://[::1]:${port}/x.png`]) {
      const refused = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-image`, { body: { chatId: "15550001111", media: { url } } })
      expect([refused.status, refused.body.code]).toEqual([400, "MEDIA_URL_NOT_ALLOWED"])
    }
    expect(requests).toBe(0)
  })
})
