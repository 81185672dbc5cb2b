import { Duration } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { WebhookSettings } from "../src/domain/Settings.js"
import { eventually, readySession, useGateway } from "./support/gateway.js"
import { readEvents } from "./support/sse.js"

/** Webhooks CRUD, test sends, deliveries and the live event stream over real HTTP on loopback. */

const webhookSettings = (overrides: Partial<WebhookSettings> = {}): WebhookSettings => ({
  timeout: Duration.seconds(2),
  allowPrivate: true,
  concurrency: 8,
  perWebhookConcurrency: 2,
  perWebhookConcurrencyMax: 2,
  eventRetention: Duration.hours(1),
  ...overrides
})

interface Received {
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

/** A loopback receiver that records every POST and answers with `status()`. */
const startReceiver = async (status: () => number = () => 200) => {
  const received: Array<Received> = []
  const server = http.createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => {
      received.push({ headers: request.headers, body: JSON.parse(body) })
      response.writeHead(status()).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close: () => server.close() }
}

/** Reads Server-Sent Events until `count` frames arrived (or the time is up), then disconnects. */
describe("webhooks over the API", () => {
  const gateway = useGateway({ webhooks: webhookSettings() })
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => void (receiver = await startReceiver()))
  afterAll(() => receiver.close())

  it("create shows the secret once; reads never show it nor header values; update, delete", async () => {
    const created = await gateway().call("POST", "/api/webhooks", {
      body: { url: receiver.url, events: ["message.received"], headers: { Authorization: "Bearer s3cret-token" }, maxAttempts: 3 }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ sessionId: null, events: ["message.received"], enabled: true, maxAttempts: 3, headers: { Authorization: "***" } })
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const id = created.body.id
    const read = await gateway().call("GET", `/api/webhooks/${id}`)
    expect(read.body.secret).toBeUndefined()
    expect(JSON.stringify(read.body)).not.toContain("s3cret-token")
    expect((await gateway().call("GET", "/api/webhooks")).body.data.map((w: { id: string }) => w.id)).toContain(id)

    const updated = await gateway().call("PUT", `/api/webhooks/${id}`, { body: { events: ["*"], enabled: false } })
    expect(updated.body).toMatchObject({ events: ["*"], enabled: false })
    expect((await gateway().call("DELETE", `/api/webhooks/${id}`)).status).toBe(204)
    const gone = await gateway().call("GET", `/api/webhooks/${id}`)
    expect([gone.status, gone.body.code]).toEqual([404, "WEBHOOK_NOT_FOUND"])
  })

  it("refuses bad webhooks in the error shape", async () => {
    const bad: Array<[unknown, string]> = [
      [{ url: "ftp://example.com/x" }, "VALIDATION_FAILED"],
      [{ url: "not a url" }, "VALIDATION_FAILED"],
      [{ url: receiver.url, events: ["message.nope"] }, "VALIDATION_FAILED"],
      [{ url: receiver.url, events: [] }, "VALIDATION_FAILED"],
      [{ url: receiver.url, headers: { "webhook-signature": "forged" } }, "VALIDATION_FAILED"],
      [{ url: receiver.url, headers: { "X-Evil": "a\r\nInjected: 1" } }, "VALIDATION_FAILED"],
      [{ url: receiver.url, maxAttempts: 0 }, "VALIDATION_FAILED"],
      [{ url: "http://name-that-does-not-resolve.invalid/hook" }, "WEBHOOK_URL_UNRESOLVABLE"]
    ]
    for (const [body, code] of bad) {
      const refused = await gateway().call("POST", "/api/webhooks", { body })
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([400, code])
    }
    const noSession = await gateway().call("POST", "/api/sessions/nope/webhooks", { body: { url: receiver.url } })
    expect([noSession.status, noSession.body.code]).toEqual([404, "SESSION_NOT_FOUND"])
  })

  it("a session's webhook gets that session's events, signed, and shows each delivery with its attempts", async () => {
    const alpha = await readySession(gateway(), "wh-alpha")
    const beta = await readySession(gateway(), "wh-beta")
    const created = await gateway().call("POST", `/api/sessions/${beta.id}/webhooks`, { body: { url: receiver.url, events: ["message.received"] } })
    expect(created.status).toBe(201)
    expect((await gateway().call("GET", `/api/sessions/${beta.id}/webhooks`)).body.data).toHaveLength(1)
    await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: beta.phone, text: "to the webhook" } })
    const hit = await eventually(async () => receiver.received.find((r) => r.body.data?.message?.text === "to the webhook"), (r) => r !== undefined)
    expect(hit!.body).toMatchObject({ event: "message.received", sessionId: beta.id, id: hit!.headers["webhook-id"] })
    expect(hit!.headers).toMatchObject({ "x-webhook-event": "message.received", "x-webhook-attempt": "1" })
    expect(hit!.headers["webhook-signature"]).toMatch(/^v1,/)

    const deliveries = await eventually(
      () => gateway().call("GET", `/api/webhooks/${created.body.id}/deliveries`),
      (r) => r.body.data.some((d: { status: string }) => d.status === "delivered")
    )
    const delivery = deliveries.body.data[0]
    expect(delivery).toMatchObject({ event: "message.received", status: "delivered", attempts: 1, lastStatusCode: 200 })
    expect(delivery.attemptLog).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })])

    const before = receiver.received.length
    const again = await gateway().call("POST", `/api/webhooks/deliveries/${delivery.id}/redeliver`)
    expect(again.status).toBe(200)
    await eventually(async () => receiver.received.length, (n) => n > before)
    expect(receiver.received.at(-1)!.headers["webhook-id"]).toBe(hit!.headers["webhook-id"])

    const tested = await gateway().call("POST", `/api/webhooks/${created.body.id}/test`)
    expect(tested.body).toMatchObject({ delivered: true, statusCode: 200 })
    expect(receiver.received.at(-1)!.body.event).toBe("webhook.test")
    const unknown = await gateway().call("POST", "/api/webhooks/deliveries/nope/redeliver")
    expect([unknown.status, unknown.body.code]).toEqual([404, "DELIVERY_NOT_FOUND"])
  })

  it("live events: Server-Sent Events filtered by session and kind, resumed with Last-Event-ID", async () => {
    const gamma = await readySession(gateway(), "sse-gamma")
    const send = (text: string) => gateway().call("POST", `/api/sessions/${gamma.id}/messages/send-text`, { body: { chatId: "15550007777", text } })
    const query = `?sessionId=${gamma.id}&events=message.received`
    const first = readEvents(gateway(), query, 1)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await send("echo one")
    const opened = await first
    expect([opened.status, opened.contentType]).toEqual([200, "text/event-stream"])
    expect(opened.frames[0]).toMatchObject({ event: "message.received", data: { sessionId: gamma.id, data: { message: { text: "echo one" } } } })

    // While nobody listens, two more replies arrive; a reconnect from the last id gets both, then live ones.
    await send("echo two")
    await send("echo three")
    await eventually(() => gateway().call("GET", `/api/sessions/${gamma.id}/messages?direction=in`), (r) => r.body.data.length === 3)
    const resumed = readEvents(gateway(), query, 3, opened.frames[0]!.id)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await send("echo four")
    const texts = (await resumed).frames.map((f) => f.data.data.message.text)
    expect(texts).toEqual(["echo two", "echo three", "echo four"])

    const refused = await gateway().call("GET", "/api/events?events=message.nope")
    expect([refused.status, refused.body.code]).toEqual([400, "VALIDATION_FAILED"])
    const noKey = await gateway().call("GET", "/api/events", { key: null })
    expect(noKey.status).toBe(401)
  })
})

describe("webhooks with the SSRF guard on (the default)", () => {
  const gateway = useGateway({ webhooks: webhookSettings({ allowPrivate: false }) })

  it("refuses URLs on loopback, private and link-local addresses at create time", async () => {
    for (const url of ["http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/x", "http://10.1.2.3/x", "http://169.254.169.254/latest"]) {
      const refused = await gateway().call("POST", "/api/webhooks", { body: { url } })
      expect([refused.status, refused.body.code], url).toEqual([400, "WEBHOOK_URL_NOT_ALLOWED"])
    }
  })
})
