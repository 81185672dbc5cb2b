import { Duration, Option } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { readySession, TEST_KEY, useGateway } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"
import { rawRequest } from "./support/rawHttp.js"

/** BODY_MAX_BYTES on every body but the media sends', which MEDIA_MAX_BYTES caps. */

const BODY_MAX = 16 * 1024
const MEDIA_MAX = 64 * 1024

const tooLarge = (maxBytes: number) => ({
  statusCode: 413,
  error: "Payload Too Large",
  code: "PAYLOAD_TOO_LARGE",
  message: expect.stringContaining(String(maxBytes)),
  details: { maxBytes }
})

/** A JSON body of exactly `size` bytes: `value`, padded with spaces (still valid JSON). */
const paddedJson = (value: unknown, size: number) => {
  const json = JSON.stringify(value)
  if (json.length > size) throw new Error(`${json.length} bytes is already more than ${size}`)
  return Buffer.from(json + " ".repeat(size - json.length))
}

describe("request body limits", () => {
  const gateway = useGateway({
    bodyMaxBytes: BODY_MAX,
    media: { url: Option.none(), maxBytes: MEDIA_MAX, allowPrivate: true, fetchTimeout: Duration.seconds(5), incoming: "store", keepRevoked: false }
  })
  let sessionId = ""
  beforeAll(async () => {
    sessionId = (await readySession(gateway(), "limits")).id
  })

  const post = (route: string, body: Buffer, options: { chunked?: boolean; contentType?: string } = {}) =>
    rawRequest(gateway().baseUrl, {
      method: "POST",
      path: `/api/sessions/${sessionId}/messages/${route}`,
      headers: { "x-api-key": TEST_KEY, "content-type": options.contentType ?? "application/json" },
      body,
      ...(options.chunked === undefined ? {} : { chunked: options.chunked })
    }).then((answer) => ({ status: answer.status, body: JSON.parse(answer.text), headers: answer.headers }))

  const text = { chatId: "15550001234@c.us", text: "padded" }

  it.each([false, true])("takes a body of exactly BODY_MAX_BYTES and refuses one byte more with 413 (chunked: %s)", async (chunked) => {
    const exact = await post("send-text", paddedJson(text, BODY_MAX), { chunked })
    expect(exact.status, JSON.stringify(exact.body)).toBe(201)

    const over = await post("send-text", paddedJson(text, BODY_MAX + 1), { chunked })
    expect(over.status).toBe(413)
    expect(over.body).toEqual(tooLarge(BODY_MAX))
    expect(over.headers["x-request-id"]).toEqual(expect.any(String))
  })

  it("refuses a chunked body far over the limit without waiting for all of it", async () => {
    const started = Date.now()
    const over = await post("send-text", paddedJson(text, 8 * 1024 * 1024), { chunked: true })
    expect(over.status).toBe(413)
    expect(over.body).toEqual(tooLarge(BODY_MAX))
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("caps every kind of body, whatever its content type, and keeps answering afterwards", async () => {
    const big = Buffer.alloc(BODY_MAX + 1, "a")
    for (const contentType of ["text/plain", "application/octet-stream", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      for (const chunked of [false, true]) {
        const over = await rawRequest(gateway().baseUrl, {
          method: "POST",
          path: "/api/sessions",
          headers: { "x-api-key": TEST_KEY, "content-type": contentType },
          body: big,
          chunked
        })
        expect(over.status, `${contentType} chunked: ${chunked}`).toBe(413)
        expect(JSON.parse(over.text)).toEqual(tooLarge(BODY_MAX))
      }
    }
    expect((await gateway().call("GET", `/api/sessions/${sessionId}`)).body.status).toBe("ready")
  })

  it("lets media sends through up to MEDIA_MAX_BYTES, and refuses more with their own 413", async () => {
    // well over BODY_MAX_BYTES, under MEDIA_MAX_BYTES
    const image = Buffer.alloc(MEDIA_MAX, 0)
    image.set(png())
    const body = (bytes: Buffer) => Buffer.from(JSON.stringify({ chatId: "15550001234@c.us", media: { data: base64(bytes) } }))
    const sent = await post("send-image", body(image), { chunked: true })
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)

    const over = await post("send-image", body(Buffer.concat([image, Buffer.from([0])])))
    expect(over.status).toBe(413)
    expect(over.body).toMatchObject({ statusCode: 413, code: "PAYLOAD_TOO_LARGE", message: expect.stringContaining("MEDIA_MAX_BYTES") })
  })

  it("gives a bulk send (which may carry media) the media limit", async () => {
    const image = Buffer.alloc(MEDIA_MAX / 2, 0)
    image.set(png())
    const bulk = { messages: [{ type: "image", chatId: "15550001234@c.us", media: { data: base64(image) } }] }
    const accepted = await post("send-bulk", Buffer.from(JSON.stringify(bulk)))
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)

    const limit = Math.ceil(MEDIA_MAX / 3) * 4 + 1024 * 1024
    const over = await post("send-bulk", paddedJson(bulk, limit + 1), { chunked: true })
    expect(over.status).toBe(413)
    expect(over.body).toEqual({ ...tooLarge(limit), message: expect.stringContaining("MEDIA_MAX_BYTES") })
  })
})
