import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option, type Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook as StandardWebhook } from "standardwebhooks"
import { storeFromSettings } from "../src/app/App.js"
import { defaultSettings } from "../src/app/Config.js"
import { AppSettings, type WebhookSettings } from "../src/domain/Settings.js"
import { DeliveryRepo } from "../src/runtime/ports/store/DeliveryRepo.js"
import { EventRepo } from "../src/runtime/ports/store/EventRepo.js"
import { WebhookRepo, type WebhookRow } from "../src/runtime/ports/store/WebhookRepo.js"
import { type DispatcherOptions, WebhookDispatcher } from "../src/runtime/webhooks/Dispatcher.js"
import { makeFanOut } from "../src/runtime/webhooks/fanOut.js"
import { defaultRetrySchedule, retryDelay } from "../src/runtime/webhooks/retrySchedule.js"
import { Events } from "../src/runtime/Events.js"
import { type DomainEvent, type EventKind } from "../src/domain/Events.js"
import { makeEvent } from "../src/domain/makeEvent.js"
import { VERSION } from "../src/domain/Health.js"
import type { ChatId } from "../src/domain/Ids.js"
import type { Delivery } from "../src/domain/Webhook.js"
import { startCore } from "./support/core.js"
import { webhookRow } from "./support/fixtures.js"
import { countStatements, perUnitTable } from "./support/statementLedger.js"
import { testSettings } from "./support/gateway.js"

// ---------------------------------------------------------------------------------------------
// A real HTTP receiver on loopback

interface Received {
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** When the request had arrived whole (ms, Date.now). */
  readonly at: number
}

/** What a receiver does with a request: answer with a status (at once, or after some milliseconds), or never answer. */
type Reply = number | { readonly status: number; readonly afterMs: number } | "hang"

interface Receiver {
  readonly url: string
  readonly received: ReadonlyArray<Received>
  /** The most requests it had open at once. */
  readonly maxOpen: () => number
}

const startReceiver = (reply: (request: Received, index: number) => Reply = () => 200): Effect.Effect<Receiver, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ receiver: Receiver; server: http.Server }>((resume) => {
      const received: Array<Received> = []
      let open = 0
      let maxOpen = 0
      const server = http.createServer((req, res) => {
        open += 1
        maxOpen = Math.max(maxOpen, open)
        res.on("close", () => void (open -= 1))
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value ?? ""]))
          const request = { path: req.url ?? "/", headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() }
          const answer = reply(request, received.push(request) - 1)
          const answerWith = (status: number) => res.writeHead(status, { "content-type": "text/plain" }).end("thanks")
          if (typeof answer === "number") answerWith(answer)
          else if (answer !== "hang") setTimeout(() => answerWith(answer.status), answer.afterMs)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, receiver: { url: `http://127.0.0.1:${port}`, received, maxOpen: () => maxOpen } }))
      })
    }),
    ({ server }) => Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
  ).pipe(Effect.map(({ receiver }) => receiver))

// ---------------------------------------------------------------------------------------------
// The dispatcher on a fresh Store, with the settings and schedule of each test


/** Retries 50 ms apart, without jitter: the default schedule's shape on a test's time scale. */
const quickRetries: Partial<DispatcherOptions> = {
  retrySchedule: { delays: [Duration.millis(50)], jitter: 0 },
  pollInterval: Duration.millis(100)
}

const webhookSettings = (overrides: Partial<WebhookSettings>) =>
  Effect.map(defaultSettings(), (defaults) => ({
    ...defaults.webhooks,
    allowPrivate: true,
    timeout: Duration.millis(300),
    ...overrides
  }))

const startDispatcher = (overrides: Partial<WebhookSettings> = {}, options: Partial<DispatcherOptions> = quickRetries) =>
  Effect.gen(function*() {
    const settings = yield* testSettings({ webhooks: yield* webhookSettings(overrides) })
    const layer = WebhookDispatcher.layer(options).pipe(
      Layer.provideMerge(Layer.mergeAll(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings))), AppSettings.layer(settings)))
    )
    return harness(yield* Layer.build(layer).pipe(Effect.orDie))
  })

/**
 * An event of any kind with any data: the dispatcher carries data without reading it, so a
 * counter tells the deliveries apart whatever the kind (the catalog's pairing is set aside here).
 */
const anyEvent = makeEvent as (kind: EventKind, sessionId: string, data: unknown) => DomainEvent

const harness = (context: Context.Context<Events | WebhookRepo | DeliveryRepo | EventRepo | WebhookDispatcher>) => {
  const webhooks = Context.get(context, WebhookRepo)
  const deliveries = Context.get(context, DeliveryRepo)
  const events = Context.get(context, Events)
  return {
    dispatcher: Context.get(context, WebhookDispatcher),
    outbox: Context.get(context, EventRepo),
    webhooks,
    addWebhook: (url: string, overrides: Partial<WebhookRow> = {}) =>
      Effect.suspend(() => {
        const row = webhookRow(url, overrides)
        return Effect.as(webhooks.insert(row), row)
      }),
    emit: (kind: EventKind, sessionId = "s1", data: unknown = { n: 1 }) =>
      Effect.suspend(() => {
        const event = anyEvent(kind, sessionId, data)
        return Effect.as(events.publish(event), event)
      }),
    /** `count` events of one kind published together (one statement, one transaction). */
    emitAll: (kind: EventKind, count: number) =>
      Effect.suspend(() => {
        const list = Array.from({ length: count }, (_, n) => anyEvent(kind, "s1", { n }))
        return Effect.as(events.publishAll(list), list)
      }),
    deliveriesOf: (webhookId: string) => Effect.map(deliveries.list(webhookId, Option.none()), (page) => page.items),
    /** Whether no delivery is pending any more (every outcome written). */
    nonePending: Effect.map(deliveries.nextDue(), Option.isNone),
    delivery: (id: string) => Effect.map(deliveries.find(id), Option.getOrThrow)
  }
}

/** Checks `condition` every 10 ms until it holds (the test's own timeout bounds the wait). */
const eventually = <A, E>(read: Effect.Effect<A, E>, condition: (value: A) => boolean, within: Duration.DurationInput = "5 seconds") =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(within)
    for (;;) {
      const value = yield* read
      if (condition(value)) return value
      if (Date.now() > deadline) return yield* Effect.dieMessage(`condition not reached within ${Duration.format(within)}: ${JSON.stringify(value)}`)
      yield* Effect.sleep("10 millis")
    }
  })

const settledDelivery = <E>(deliveries: Effect.Effect<ReadonlyArray<Delivery>, E>) =>
  eventually(deliveries, (list) => list.length > 0 && list.every((d) => d.status !== "pending")).pipe(Effect.map((list) => list[0]!))

/** Verifies a request with the `standardwebhooks` library, as a receiver would; throws when it does not verify. */
const verify = (secret: string, request: Received) => new StandardWebhook(secret).verify(request.body, request.headers) as DomainEvent

// ---------------------------------------------------------------------------------------------

describe("webhook delivery", () => {
  it("waits 10 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h (±20%) between attempts, then every 10 h", () => {
    const seconds = (attempt: number, random: number) => Duration.toSeconds(retryDelay(defaultRetrySchedule, attempt, random))
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => seconds(n, 0.5))).toEqual([10, 60, 300, 1800, 7200, 18000, 36000, 36000, 36000])
    expect(seconds(1, 0)).toBe(8)
    expect(seconds(7, 0.999999)).toBeCloseTo(43200, -1)
  })

  it.scopedLive("a received message reaches the webhook as a signed POST that standardwebhooks verifies", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const defaults = yield* defaultSettings()
      const core = yield* startCore({ webhooks: { ...defaults.webhooks, allowPrivate: true } })
      const webhooks = Context.get(core.context, WebhookRepo)
      const row = webhookRow(`${receiver.url}/hooks/in`, { events: ["message.received"], headers: { "X-Tenant": "acme", "User-Agent": "not ours" } })
      yield* webhooks.insert(row)

      const session = yield* core.sessions.create({ name: "webhooks", autoStart: true })
      yield* core.awaitStatus(session.id, "ready")
      yield* core.messaging.sendText(session.id, { chatId: "15550007777@c.us" as ChatId, text: "hello, webhook" })

      const [request] = yield* eventually(Effect.sync(() => receiver.received), (list) => list.length >= 1)
      const payload = verify(row.secret, request!)
      expect(request!.path).toBe("/hooks/in")
      expect(payload).toMatchObject({ event: "message.received", sessionId: session.id, data: { message: { text: "hello, webhook" } } })
      expect(request!.headers).toMatchObject({
        "webhook-id": payload.id,
        "x-webhook-event": "message.received",
        "x-webhook-attempt": "1",
        "content-type": "application/json",
        "user-agent": `Switchboard/${VERSION}`,
        "x-tenant": "acme"
      })
      expect(request!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
      expect(Math.abs(Number(request!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(10)
      // The body is the stored event, as it is in the outbox.
      const stored = yield* Context.get(core.context, EventRepo).find(payload.id)
      expect(JSON.parse(request!.body)).toEqual(stored)
      expect(Object.keys(JSON.parse(request!.body))).toEqual(["id", "event", "sessionId", "timestamp", "data"])

      const deliveries = Context.get(core.context, DeliveryRepo)
      const delivery = yield* eventually(
        Effect.map(deliveries.list(row.id, Option.none()), (page) => page.items),
        (list) => list[0]?.status === "delivered"
      )
      expect(delivery).toHaveLength(1) // message.sent, session.status…: not what this webhook asked for
      expect(delivery[0]!.attemptLog).toMatchObject([{ attempt: 1, statusCode: 200, error: null }])
    }))

  it.scopedLive("a 500 is retried with the same webhook-id and a new signature until it is delivered", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver((_, index) => (index < 2 ? 500 : 204))
      const h = yield* startDispatcher()
      const row = yield* h.addWebhook(receiver.url)
      const event = yield* h.emit("message.received")

      const delivery = yield* settledDelivery(h.deliveriesOf(row.id))
      expect(delivery).toMatchObject({ status: "delivered", attempts: 3, eventId: event.id, nextAttemptAt: null, lastStatusCode: 204 })
      expect(delivery.attemptLog.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
        [1, 500, "the receiver answered 500"],
        [2, 500, "the receiver answered 500"],
        [3, 204, null]
      ])
      expect(receiver.received.map((r) => r.headers["x-webhook-attempt"])).toEqual(["1", "2", "3"])
      expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([event.id]))
      for (const request of receiver.received) expect(verify(row.secret, request)).toEqual(event)
      expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1)
    }))

  it.scopedLive("a receiver that does not answer within the timeout is retried, and the attempt log says why", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver((_, index) => (index === 0 ? "hang" : 200))
      const h = yield* startDispatcher({ timeout: Duration.millis(300) })
      const row = yield* h.addWebhook(receiver.url)
      yield* h.emit("message.ack")

      const delivery = yield* settledDelivery(h.deliveriesOf(row.id))
      expect(delivery.status).toBe("delivered")
      const [first, second] = delivery.attemptLog
      expect(first).toMatchObject({ attempt: 1, statusCode: null, error: "no answer within 300 ms" })
      expect(first!.durationMs).toBeGreaterThanOrEqual(290)
      expect(first!.durationMs).toBeLessThan(1_000)
      expect(second).toMatchObject({ attempt: 2, statusCode: 200, error: null })
    }))

  it.scopedLive("fails the delivery after the webhook's maxAttempts, and records every attempt", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => 503)
      const h = yield* startDispatcher()
      const row = yield* h.addWebhook(receiver.url, { maxAttempts: 3 })
      yield* h.emit("message.sent")

      const delivery = yield* settledDelivery(h.deliveriesOf(row.id))
      expect(delivery).toMatchObject({ status: "failed", attempts: 3, nextAttemptAt: null, lastStatusCode: 503 })
      expect(delivery.attemptLog.map((a) => a.attempt)).toEqual([1, 2, 3])
      yield* Effect.sleep("200 millis")
      expect(receiver.received).toHaveLength(3)
    }))

  it.scopedLive("410 Gone turns the webhook off: no retry, its pending deliveries are given up, new events skip it", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => 410)
      const h = yield* startDispatcher({ perWebhookConcurrency: 1 })
      const row = yield* h.addWebhook(receiver.url)
      yield* h.emit("message.received", "s1", { n: 1 })
      yield* h.emit("message.received", "s1", { n: 2 })

      const settled = yield* eventually(h.deliveriesOf(row.id), (list) => list.length === 2 && list.every((d) => d.status === "failed"))
      const [second, first] = settled // newest first
      expect(first).toMatchObject({ attempts: 1, lastStatusCode: 410, nextAttemptAt: null })
      expect(second).toMatchObject({ attempts: 0, lastError: "the webhook is disabled (410 Gone from the receiver)" })
      expect(Option.getOrThrow(yield* h.webhooks.find(row.id))).toMatchObject({ enabled: false, disabledReason: "410 Gone from the receiver" })

      yield* h.emit("message.received", "s1", { n: 3 })
      yield* Effect.sleep("300 millis")
      expect(receiver.received).toHaveLength(1)
      expect(yield* h.deliveriesOf(row.id)).toHaveLength(2)
    }))

  it.scopedLive("a receiver that hangs holds only its own slots: another webhook's deliveries go out at once", () =>
    Effect.gen(function*() {
      const slow = yield* startReceiver(() => "hang")
      const fast = yield* startReceiver()
      const h = yield* startDispatcher({ timeout: Duration.millis(1_500), concurrency: 4, perWebhookConcurrency: 2 })
      const dead = yield* h.addWebhook(slow.url)
      // A backlog for the dead receiver first: its deliveries are the oldest due.
      for (let n = 0; n < 10; n++) yield* h.emit("message.received", "s1", { n })
      yield* eventually(h.deliveriesOf(dead.id), (list) => list.length === 10)
      yield* eventually(Effect.sync(() => slow.received), (list) => list.length === 2)

      const alive = yield* h.addWebhook(fast.url)
      const published = Date.now()
      const events: Array<DomainEvent> = []
      for (let n = 0; n < 10; n++) events.push(yield* h.emit("message.received", "s1", { n: 10 + n }))

      const received = yield* eventually(Effect.sync(() => fast.received), (list) => list.length === 10, "1200 millis")
      const lastArrival = Math.max(...received.map((r) => r.at))
      expect(lastArrival - published).toBeLessThan(1_000) // well before the first hanging attempt times out
      expect(received.map((r) => r.headers["webhook-id"]).sort()).toEqual(events.map((e) => e.id).sort()) // each once
      expect(received.every((r) => r.headers["x-webhook-attempt"] === "1")).toBe(true)
      expect(fast.maxOpen()).toBeLessThanOrEqual(2)
      // The dead receiver has had exactly its two slots, two different deliveries, all along.
      expect(slow.maxOpen()).toBe(2)
      expect(new Set(slow.received.map((r) => r.headers["webhook-id"])).size).toBe(2)
      expect((yield* h.deliveriesOf(dead.id)).every((d) => d.status === "pending" && d.attempts === 0)).toBe(true)
      const delivered = yield* eventually(h.deliveriesOf(alive.id), (list) => list.every((d) => d.status === "delivered"))
      expect(delivered).toHaveLength(10)
    }))

  it.scopedLive("a receiver answering well and fast gets more in flight while a backlog waits, up to WEBHOOK_CONCURRENCY_PER_WEBHOOK_MAX", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => ({ status: 200, afterMs: 20 }))
      const h = yield* startDispatcher({ perWebhookConcurrency: 2, perWebhookConcurrencyMax: 6 })
      const webhook = yield* h.addWebhook(receiver.url)
      const events: Array<DomainEvent> = []
      for (let n = 0; n < 150; n++) events.push(yield* h.emit("message.received", "s1", { n }))
      const received = yield* eventually(Effect.sync(() => receiver.received), (list) => list.length >= 150, "10 seconds")
      expect(receiver.maxOpen()).toBeGreaterThan(2)
      expect(receiver.maxOpen()).toBeLessThanOrEqual(6)
      expect(received.map((r) => r.headers["webhook-id"]).sort()).toEqual(events.map((e) => e.id).sort()) // each once
      yield* eventually(h.deliveriesOf(webhook.id), (list) => list.length === 150 && list.every((d) => d.status === "delivered"))
    }))

  it.scopedLive("deliveries cost the Store a fraction of a statement each: events fan out, are claimed and settled in batches", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const h = yield* startDispatcher({}, { ...quickRetries, pollInterval: Duration.millis(500) })
      const webhook = yield* h.addWebhook(receiver.url)
      const COUNT = 300
      let published: ReadonlyArray<DomainEvent> = []
      const reading = yield* Effect.promise(() =>
        countStatements(() =>
          Effect.runPromise(Effect.gen(function*() {
            published = yield* h.emitAll("message.received", COUNT)
            yield* eventually(Effect.sync(() => receiver.received), (list) => list.length >= COUNT, "20 seconds")
            yield* Effect.sleep("200 millis") // the outcomes are written within 20 ms of each other
          }))
        )
      )
      // every event delivered once, and every outcome written by the end of the count
      expect(receiver.received.map((r) => r.headers["webhook-id"]).sort()).toEqual(published.map((e) => e.id).sort())
      const settled = yield* h.deliveriesOf(webhook.id)
      expect(settled.length).toBe(COUNT)
      expect(settled.every((d) => d.status === "delivered")).toBe(true)
      // What the dispatcher asked of the Store, the events' own INSERT (the publisher's) aside.
      // A delivery claimed, its outcome and its attempt written one by one would be 3 statements
      // a delivery; in batches it was 0.4 (~0.05 each for claims, outcomes, attempts and their
      // transactions, 0.16 the worker's look at when the next one is due).
      const dispatching = reading.bySql.filter(([sql]) => !sql.startsWith("INSERT INTO events "))
      const statements = dispatching.reduce((sum, [, n]) => sum + n, 0)
      const perDelivery = statements / COUNT
      console.log(perUnitTable("webhook deliveries", { ...reading, bySql: dispatching, total: statements }, COUNT))
      expect(perDelivery).toBeLessThan(1)
    }))

  it.scopedLive("a receiver that fails or answers slowly keeps WEBHOOK_CONCURRENCY_PER_WEBHOOK in flight, backlog or not", () =>
    Effect.gen(function*() {
      const failing = yield* startReceiver(() => ({ status: 500, afterMs: 20 }))
      const slow = yield* startReceiver(() => ({ status: 200, afterMs: 300 }))
      const h = yield* startDispatcher({ timeout: Duration.seconds(2), perWebhookConcurrency: 2, perWebhookConcurrencyMax: 8 })
      yield* h.addWebhook(failing.url)
      yield* h.addWebhook(slow.url)
      for (let n = 0; n < 40; n++) yield* h.emit("message.received", "s1", { n })
      // The failing one is retried every 50 ms: many rounds of answers, none of which may widen it.
      yield* eventually(Effect.sync(() => failing.received), (list) => list.length >= 80)
      yield* eventually(Effect.sync(() => slow.received), (list) => list.length >= 12)
      expect(failing.maxOpen()).toBe(2)
      expect(slow.maxOpen()).toBe(2)
    }))

  it.scopedLive("at rest, a dispatcher with hundreds of webhooks asks the Store nothing per webhook, and still delivers to all of them", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const h = yield* startDispatcher()
      for (let n = 0; n < 150; n++) yield* h.addWebhook(`${receiver.url}/${n}`)
      yield* h.emit("message.received")
      // 150 deliveries, each its own receiver path: well under a second on a quiet machine; the
      // wider wait is for a busy one (CI has seen 5 s run out with other work on both cores)
      yield* eventually(Effect.sync(() => receiver.received), (list) => list.length === 150, "20 seconds")
      yield* eventually(h.nonePending, (none) => none, "20 seconds") // every outcome written

      const atRest = yield* Effect.promise(() => countStatements(() => Effect.runPromise(Effect.sleep("1 second"))))
      const count = (fragment: string) => atRest.bySql.filter(([sql]) => sql.includes(fragment)).reduce((sum, [, n]) => sum + n, 0)
      expect(count("MIN(next_attempt_at)")).toBeGreaterThanOrEqual(5) // the worker looked, every 100 ms
      expect(count("UNION ALL") + count("WITH RECURSIVE")).toBe(0) // and asked nothing of each webhook
      expect(count("FROM webhooks")).toBe(0) // nor read them again

      yield* h.emit("message.received", "s1", { n: 2 })
      yield* eventually(Effect.sync(() => receiver.received), (list) => list.length === 300, "20 seconds")
    }))

  it.scopedLive("each webhook gets the kinds it asked for, of its session (or of all), and never a test event", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const h = yield* startDispatcher()
      const everything = yield* h.addWebhook(`${receiver.url}/everything`)
      yield* h.addWebhook(`${receiver.url}/acks`, { events: ["message.ack"] })
      yield* h.addWebhook(`${receiver.url}/s1`, { sessionId: "s1" })
      yield* h.addWebhook(`${receiver.url}/s2-received`, { sessionId: "s2", events: ["message.received"] })
      yield* h.addWebhook(`${receiver.url}/off`, { enabled: false })

      yield* h.emit("message.received", "s1")
      yield* h.emit("message.ack", "s2")
      yield* h.emit("session.status", "s2")
      yield* h.emit("webhook.test", "s1")

      yield* eventually(h.deliveriesOf(everything.id), (list) => list.length === 3 && list.every((d) => d.status === "delivered"))
      yield* Effect.sleep("200 millis")
      const seen = receiver.received.map((r) => `${r.path} ${r.headers["x-webhook-event"]} ${JSON.parse(r.body).sessionId}`).sort()
      expect(seen).toEqual([
        "/acks message.ack s2",
        "/everything message.ack s2",
        "/everything message.received s1",
        "/everything session.status s2",
        "/s1 message.received s1"
      ])
      expect(yield* h.outbox.undispatched(10)).toEqual([])
    }))

  it.scopedLive("an event no webhook wants wakes no fan-out pass; the next wanted one takes it along", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const h = yield* startDispatcher({}, { ...quickRetries, pollInterval: Duration.seconds(5) })
      const acks = yield* h.addWebhook(`${receiver.url}/acks`, { events: ["message.ack"] })
      yield* h.emit("message.ack")
      yield* eventually(h.deliveriesOf(acks.id), (list) => list.length === 1)

      yield* h.webhooks.cached() // the copy the observer matches against, fresh for a second
      const unwanted = [yield* h.emit("session.status"), yield* h.emit("message.received")]
      yield* Effect.sleep("150 millis")
      expect((yield* h.outbox.undispatched(10)).map((event) => event.id)).toEqual(unwanted.map((event) => event.id))

      yield* h.emit("message.ack")
      yield* eventually(h.outbox.undispatched(10), (waiting) => waiting.length === 0, "2 seconds")
      const delivered = yield* eventually(h.deliveriesOf(acks.id), (list) => list.length === 2 && list.every((d) => d.status === "delivered"))
      expect(delivered).toHaveLength(2)
      expect(receiver.received.every((r) => r.headers["x-webhook-event"] === "message.ack")).toBe(true)
    }))

  it.scoped("a fan-out pass with no webhook marks up to ten batches unread; with the copy expired it reads as before", () =>
    Effect.gen(function*() {
      const settings = yield* testSettings()
      // The Store's own repositories, but the kept copy of the webhooks is what the test says,
      // and every read of the webhooks is counted.
      let kept: ReadonlyArray<WebhookRow> | undefined = []
      let webhookReads = 0
      const controlledWebhooks = Layer.effect(WebhookRepo, Effect.map(WebhookRepo, (real) => ({
        ...real,
        kept: () => kept,
        cached: () => Effect.suspend(() => (webhookReads++, real.cached()))
      })))
      const context = yield* Layer.build(Layer.provideMerge(controlledWebhooks, storeFromSettings(settings))).pipe(Effect.orDie)
      const outbox = Context.get(context, EventRepo)
      const fanOut = yield* Effect.provide(makeFanOut, context)
      const revoked = (n: number) => makeEvent("message.revoked", "s1", { messageId: `m${n}`, chatId: "15550001111@c.us", by: "15550001111@c.us" })
      const waiting = Array.from({ length: 1_500 }, (_, n) => revoked(n))
      yield* outbox.appendAll(waiting)

      expect(yield* fanOut(100)).toEqual({ events: 1_000, more: true, deliveries: [] })
      expect((yield* outbox.undispatched(1))[0]!.id).toBe(waiting[1_000]!.id)
      expect(yield* fanOut(100)).toEqual({ events: 500, more: false, deliveries: [] })
      expect(webhookReads).toBe(0)

      kept = undefined // the copy expired: the events are read and matched against a fresh one
      yield* outbox.appendAll([revoked(1_500), revoked(1_501)])
      expect(yield* fanOut(100)).toEqual({ events: 2, more: false, deliveries: [] })
      expect(webhookReads).toBe(1)
      expect(yield* outbox.undispatched(10)).toEqual([])
    }))

  it.scopedLive("with no webhook, waiting events are marked; a webhook added later gets what follows it", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const h = yield* startDispatcher()
      expect(yield* h.webhooks.cached()).toEqual([]) // the copy the fan-out looks at, fresh for a second
      const before = Array.from({ length: 1_500 }, (_, n) => makeEvent("message.revoked", "s1", { messageId: `m${n}`, chatId: "15550001111@c.us", by: "15550001111@c.us" }))
      yield* h.outbox.appendAll(before)
      yield* eventually(h.outbox.undispatched(10), (waiting) => waiting.length === 0, "1 second")

      const row = yield* h.addWebhook(receiver.url)
      const after = yield* h.emit("message.received")
      const [delivery] = yield* eventually(h.deliveriesOf(row.id), (list) => list.length === 1 && list[0]!.status === "delivered")
      expect(delivery!.eventId).toBe(after.id)
      yield* Effect.sleep("200 millis")
      expect(receiver.received.map((request) => JSON.parse(request.body).id)).toEqual([after.id])
    }))

  it.scopedLive("events written while no one was listening (after a restart) are delivered by the poll", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const h = yield* startDispatcher()
      const row = yield* h.addWebhook(receiver.url)
      const event = makeEvent("message.revoked", "s1", { messageId: "m1", chatId: "15550001111@c.us", by: "15550001111@c.us" })
      yield* h.outbox.appendAll([event]) // the outbox only: no live wake-up

      yield* settledDelivery(h.deliveriesOf(row.id))
      expect(verify(row.secret, receiver.received[0]!)).toEqual(event)
    }))

  it.scopedLive("prunes dispatched events past the retention, but keeps those a pending delivery still has to send", () =>
    Effect.gen(function*() {
      let status = 200
      const receiver = yield* startReceiver(() => status)
      const h = yield* startDispatcher({ eventRetention: Duration.millis(100) }, {
        ...quickRetries,
        retrySchedule: { delays: [Duration.seconds(30)], jitter: 0 },
        pruneInterval: Duration.millis(50)
      })
      const acks = yield* h.addWebhook(receiver.url, { events: ["message.ack"] })
      const sent = yield* h.addWebhook(receiver.url, { events: ["message.sent"] })
      const unwanted = yield* h.emit("session.qr")
      const delivered = yield* h.emit("message.ack")
      yield* settledDelivery(h.deliveriesOf(acks.id))
      status = 500
      const retrying = yield* h.emit("message.sent")
      yield* eventually(h.deliveriesOf(sent.id), (list) => list[0]?.attempts === 1)

      yield* eventually(h.outbox.find(delivered.id), (event) => event === undefined)
      expect(yield* h.outbox.find(unwanted.id)).toBeUndefined()
      yield* Effect.sleep("200 millis")
      expect(yield* h.outbox.find(retrying.id)).toEqual(retrying)
    }))

  it.scopedLive("without WEBHOOK_ALLOW_PRIVATE a loopback URL is refused at delivery, with the reason in the attempt log", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const h = yield* startDispatcher({ allowPrivate: false })
      const port = new URL(receiver.url).port
      const literal = yield* h.addWebhook(`http://127.0.0.1:${port}/`, { maxAttempts: 1 })
      const v6 = yield* h.addWebhook(`http://[::1]:${port}/`, { maxAttempts: 1 })
      const named = yield* h.addWebhook(`http://localhost:${port}/`, { maxAttempts: 1 })
      yield* h.emit("message.received")

      const error = (webhookId: string) => Effect.map(settledDelivery(h.deliveriesOf(webhookId)), (d) => [d.status, d.attemptLog[0]?.statusCode, d.lastError])
      expect(yield* error(literal.id)).toEqual(["failed", null, "127.0.0.1 is a loopback, private or reserved address (WEBHOOK_ALLOW_PRIVATE=false)"])
      expect(yield* error(v6.id)).toEqual(["failed", null, "[::1] is a loopback, private or reserved address (WEBHOOK_ALLOW_PRIVATE=false)"])
      expect(yield* error(named.id)).toEqual(["failed", null, "localhost resolves to a loopback, private or reserved address (WEBHOOK_ALLOW_PRIVATE=false)"])
      expect(receiver.received).toHaveLength(0)
    }))

  it.scopedLive("sendTest sends one webhook.test to that webhook only, says how it went, and never retries it", () =>
    Effect.gen(function*() {
      let status = 200
      const receiver = yield* startReceiver(() => status)
      const h = yield* startDispatcher()
      const row = yield* h.addWebhook(`${receiver.url}/tested`, { sessionId: "s1", events: ["message.ack"] })
      yield* h.addWebhook(`${receiver.url}/bystander`)

      const ok = yield* h.dispatcher.sendTest(row)
      expect(ok).toMatchObject({ delivered: true, statusCode: 200, error: null })
      expect(ok.durationMs).toBeGreaterThanOrEqual(0)
      expect(receiver.received).toHaveLength(1)
      const payload = verify(row.secret, receiver.received[0]!)
      expect(payload).toMatchObject({ event: "webhook.test", sessionId: "s1", data: { webhookId: row.id } })
      expect(receiver.received[0]).toMatchObject({ path: "/tested", headers: { "x-webhook-event": "webhook.test", "x-webhook-attempt": "1" } })
      expect(yield* h.delivery(ok.deliveryId)).toMatchObject({ status: "delivered", eventId: payload.id, attempts: 1 })

      status = 500
      const failed = yield* h.dispatcher.sendTest(row)
      expect(failed).toMatchObject({ delivered: false, statusCode: 500, error: "the receiver answered 500" })
      yield* Effect.sleep("300 millis")
      expect(receiver.received.map((r) => r.path)).toEqual(["/tested", "/tested"]) // no retry, no bystander
      expect(yield* h.delivery(failed.deliveryId)).toMatchObject({ status: "failed", attempts: 1, nextAttemptAt: null })
    }))

  it.scopedLive("redeliver sends a delivery again, with the same webhook-id and the next attempt number", () =>
    Effect.gen(function*() {
      let status = 500
      const receiver = yield* startReceiver(() => status)
      const h = yield* startDispatcher()
      const row = yield* h.addWebhook(receiver.url, { maxAttempts: 1 })
      const event = yield* h.emit("message.failed")
      const failed = yield* settledDelivery(h.deliveriesOf(row.id))
      expect(failed).toMatchObject({ status: "failed", attempts: 1 })

      status = 200
      yield* h.dispatcher.redeliver(failed.id)
      const redelivered = yield* eventually(h.delivery(failed.id), (d) => d.status === "delivered")
      expect(redelivered.attemptLog.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 500], [2, 200]])
      expect(receiver.received.map((r) => [r.headers["webhook-id"], r.headers["x-webhook-attempt"]])).toEqual([[event.id, "1"], [event.id, "2"]])
      expect(verify(row.secret, receiver.received[1]!)).toEqual(event)
    }))
})
