import { Duration, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeDrainMeter, retryAfterSeconds } from "../src/services/outboundBacklog.js"
import { eventually, readySession, type TestGateway, useGateway } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"

/**
 * Issue 19, backpressure: a session's outbound backlog is bounded (OUTBOUND_BACKLOG_MAX). Past
 * it every kind of send is refused with 429 SESSION_BACKLOG_FULL and a Retry-After computed from
 * the backlog and the pacing; nothing refused is stored, nothing accepted is lost, and
 * GET /api/sessions/{id} shows the backlog.
 */

const MAX = 3
/** Reconnects are quick, so that a session let back online drains its lane within the test. */
const quickReconnect = {
  initialDelay: Duration.millis(50),
  maxDelay: Duration.millis(200),
  maxAttempts: 10_000,
  healthyAfter: Duration.seconds(30)
}

const errorShape = (code: string) => ({ statusCode: 429, error: "Too Many Requests", code, message: expect.any(String), details: expect.any(Object) })

const backlogOf = async (gateway: TestGateway, sessionId: string) =>
  (await gateway.call("GET", `/api/sessions/${sessionId}`)).body.outbound as { backlog: number; max: number | null }

/** The session loses its connection and cannot get it back: it stays linked and accepts sends, but its lane cannot send. */
const cutOff = async (gateway: TestGateway, sessionId: string) => {
  await Effect.runPromise(gateway.network.refuseConnections(sessionId, "1 hour"))
  await Effect.runPromise(gateway.network.dropConnection(sessionId))
  await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "disconnected")
}

/** Lets the session connect again; its lane then sends what waited. */
const reconnect = async (gateway: TestGateway, sessionId: string) => {
  await Effect.runPromise(gateway.network.refuseConnections(sessionId, 0))
  await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "ready")
}

describe("the outbound backlog, with pacing on (30 sends a minute: one every 2 s)", () => {
  const gateway = useGateway({ outboundBacklogMax: MAX, pacing: { sendsPerMinute: 30 }, reconnect: quickReconnect })

  it("refuses every kind of send past the bound with 429 SESSION_BACKLOG_FULL and a Retry-After from backlog and pacing; stores none of them", async () => {
    const sender = await readySession(gateway(), "paced-sender")
    const recipient = await readySession(gateway(), "paced-recipient")
    expect(await backlogOf(gateway(), sender.id)).toEqual({ backlog: 0, max: MAX })
    await cutOff(gateway(), sender.id)

    const send = (path: string, body: unknown) => gateway().call("POST", `/api/sessions/${sender.id}${path}`, { body })
    const accepted = []
    for (const [i, path, body] of [
      [1, "/messages/send-text", { chatId: recipient.phone, text: "first" }],
      [2, "/messages/send-location", { chatId: recipient.phone, latitude: 1.5, longitude: -2.25 }],
      [3, "/messages/send-text", { chatId: recipient.phone, text: "third" }]
    ] as const) {
      const answer = await send(path, body)
      expect(answer.status, path).toBe(201)
      accepted.push(answer.body.messageId as string)
      expect(await backlogOf(gateway(), sender.id)).toEqual({ backlog: i, max: MAX })
    }

    // One more send must wait for one to go out: one pacing interval.
    const refusals: Array<[string, unknown]> = [
      ["/messages/send-text", { chatId: recipient.phone, text: "one too many" }],
      ["/messages/send-location", { chatId: recipient.phone, latitude: 1, longitude: 2 }],
      ["/messages/send-contact", { chatId: recipient.phone, contacts: [{ name: "Ada Lovelace", phone: "+44 20 7946 0001" }] }],
      ["/messages/send-poll", { chatId: recipient.phone, name: "Lunch?", options: ["yes", "no"] }],
      ["/messages/send-image", { chatId: recipient.phone, media: { data: base64(png("refused")) } }],
      [`/messages/${accepted[0]}/forward`, { chatId: recipient.phone }],
      ["/status/text", { text: "refused status", contacts: [recipient.phone] }],
      ["/status/image", { media: { data: base64(png("refused status")) }, contacts: [recipient.phone] }]
    ]
    for (const [path, body] of refusals) {
      const refused = await send(path, body)
      expect(refused.status, path).toBe(429)
      expect(refused.body, path).toEqual(errorShape("SESSION_BACKLOG_FULL"))
      expect(refused.body.details, path).toEqual({ backlog: MAX, max: MAX, retryAfterSeconds: 2 })
      expect(refused.headers.get("retry-after"), path).toBe("2")
    }
    // A batch of two must wait for two to go out; it is refused whole.
    const bulk = await send("/messages/send-bulk", {
      messages: [{ type: "text", chatId: recipient.phone, text: "bulk 1" }, { type: "text", chatId: recipient.phone, text: "bulk 2" }]
    })
    expect([bulk.status, bulk.body.code, bulk.headers.get("retry-after")]).toEqual([429, "SESSION_BACKLOG_FULL", "4"])
    // One larger than the bound could never fit: waiting would not help.
    const huge = await send("/messages/send-bulk", {
      messages: Array.from({ length: MAX + 1 }, (_, i) => ({ type: "text", chatId: recipient.phone, text: `huge ${i}` }))
    })
    expect([huge.status, huge.body.code, huge.headers.get("retry-after")]).toEqual([400, "BATCH_TOO_LARGE", null])

    // Nothing refused was stored.
    const stored = (await gateway().call("GET", `/api/sessions/${sender.id}/messages`)).body.data as Array<{ id: string }>
    expect(stored.map((message) => message.id).sort()).toEqual([...accepted].sort())
    expect(await backlogOf(gateway(), sender.id)).toEqual({ backlog: MAX, max: MAX })

    // Back online, the lane drains at the pacing, every accepted send goes out, and sends are accepted again.
    await reconnect(gateway(), sender.id)
    await eventually(() => backlogOf(gateway(), sender.id), (outbound) => outbound.backlog === 0, 20_000)
    for (const messageId of accepted) {
      const message = await gateway().call("GET", `/api/sessions/${sender.id}/messages/${messageId}`)
      expect(["sent", "delivered", "read"], messageId).toContain(message.body.status)
    }
    const inbox = await eventually(
      () => gateway().call("GET", `/api/sessions/${recipient.id}/messages?direction=in`),
      (r) => r.body.data.length === 3
    )
    expect(inbox.body.data.map((message: { type: string }) => message.type).sort()).toEqual(["location", "text", "text"])
    const again = await send("/messages/send-bulk", {
      messages: [{ type: "text", chatId: recipient.phone, text: "bulk 1" }, { type: "text", chatId: recipient.phone, text: "bulk 2" }]
    })
    expect(again.status).toBe(202)
  }, 60_000)

  it("counts the sends a restarted session queues again from the Store, and while it is stopped", async () => {
    const sender = await readySession(gateway(), "restarted-sender")
    const recipient = await readySession(gateway(), "restarted-recipient")
    await cutOff(gateway(), sender.id)
    const send = (text: string) => gateway().call("POST", `/api/sessions/${sender.id}/messages/send-text`, { body: { chatId: recipient.phone, text } })
    for (const text of ["a", "b", "c"]) expect((await send(text)).status).toBe(201)

    // Stopped, its actor is gone: the Store's unsent messages are the backlog.
    expect((await gateway().call("POST", `/api/sessions/${sender.id}/stop`)).body.status).toBe("stopped")
    expect(await backlogOf(gateway(), sender.id)).toEqual({ backlog: 3, max: MAX })
    // Started again (still cut off), its new lane queues them again and the bound still holds.
    await gateway().call("POST", `/api/sessions/${sender.id}/start`)
    await eventually(() => gateway().call("GET", `/api/sessions/${sender.id}`), (r) => r.body.status === "disconnected")
    expect(await backlogOf(gateway(), sender.id)).toEqual({ backlog: 3, max: MAX })
    const refused = await send("d")
    expect([refused.status, refused.body.code, refused.headers.get("retry-after")]).toEqual([429, "SESSION_BACKLOG_FULL", "2"])

    await reconnect(gateway(), sender.id)
    await eventually(() => backlogOf(gateway(), sender.id), (outbound) => outbound.backlog === 0, 20_000)
    const inbox = await eventually(
      () => gateway().call("GET", `/api/sessions/${recipient.id}/messages?direction=in`),
      (r) => r.body.data.length === 3
    )
    expect(inbox.body.data.map((message: { text: string }) => message.text).sort()).toEqual(["a", "b", "c"])
  }, 60_000)
})

describe("the outbound backlog, with pacing off", () => {
  const gateway = useGateway({ outboundBacklogMax: MAX, reconnect: quickReconnect })

  it("tells a minute once the lane is seen not sending (the estimate goes no further), and takes sends again once it drains", async () => {
    const sender = await readySession(gateway(), "unpaced-sender")
    const recipient = await readySession(gateway(), "unpaced-recipient")
    await cutOff(gateway(), sender.id)
    const send = () => gateway().call("POST", `/api/sessions/${sender.id}/messages/send-text`, { body: { chatId: recipient.phone, text: "hi" } })
    for (let i = 0; i < MAX; i++) expect((await send()).status).toBe(201)
    // Until the lane has been watched with work for a while, the wait is estimated at an assumed rate.
    const first = await send()
    expect(first.status).toBe(429)
    expect(Number(first.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    // Watched twice, a while apart, with nothing gone out: the lane is stalled, and the estimate says so.
    let later = first
    for (let look = 0; look < 2; look++) {
      await new Promise((resolve) => setTimeout(resolve, 300))
      later = await send()
    }
    expect([later.status, later.body.code, later.headers.get("retry-after")]).toEqual([429, "SESSION_BACKLOG_FULL", "60"])

    await reconnect(gateway(), sender.id)
    await eventually(() => backlogOf(gateway(), sender.id), (outbound) => outbound.backlog === 0)
    expect((await send()).status).toBe(201)
  }, 30_000)
})

describe("Retry-After", () => {
  it("is the time for the sends ahead to go out at the session's pace, at least a second, at most the ceiling", () => {
    // 3 waiting, bound 3, one more wanted: one must go out first.
    expect(retryAfterSeconds({ backlog: 3, max: 3, wanted: 1, secondsPerSend: 2 })).toBe(2)
    expect(retryAfterSeconds({ backlog: 10_000, max: 10_000, wanted: 100, secondsPerSend: 3 })).toBe(300)
    expect(retryAfterSeconds({ backlog: 10_000, max: 10_000, wanted: 1, secondsPerSend: 1 / 50 })).toBe(1)
    expect(retryAfterSeconds({ backlog: 10_000, max: 10_000, wanted: 100, secondsPerSend: Infinity, ceiling: 60 })).toBe(60)
  })

  it("measures an unpaced lane's speed from what went out between two looks while it had work", () => {
    const meter = makeDrainMeter()
    expect(meter.observe("s", 10, 0)).toBeUndefined()
    meter.admitted("s", 5)
    // 10 waiting plus 5 let in, 5 left a second later: 10 went out in that second.
    expect(meter.observe("s", 5, 1_000)).toBe(10)
    // Looks closer together than 200 ms measure nothing new.
    expect(meter.observe("s", 4, 1_100)).toBe(10)
    // Each new window weighs half: 5 waiting plus 2 let in, 2 left: 5 went out in the next second.
    meter.admitted("s", 2)
    expect(meter.observe("s", 2, 2_000)).toBe(7.5)
    // A window in which the lane ran dry shows it idle part of the time, not its speed: kept as it was.
    expect(meter.observe("s", 0, 3_000)).toBe(7.5)
    expect(meter.observe("s", 20, 4_000)).toBe(7.5)
    // Each session is measured on its own.
    expect(meter.observe("other", 3, 4_000)).toBeUndefined()
  })
})
