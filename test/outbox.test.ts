import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Queue, Stream, TestClock } from "effect"
import type { DomainEvent } from "../src/domain/Events.js"
import { defaultSettings } from "../src/app/Config.js"
import { storeFromSettings } from "../src/app/App.js"
import { DeliveryRepo } from "../src/runtime/ports/store/DeliveryRepo.js"
import { EventRepo } from "../src/runtime/ports/store/EventRepo.js"
import { WebhookRepo } from "../src/runtime/ports/store/WebhookRepo.js"
import { SessionRepo } from "../src/runtime/ports/store/SessionRepo.js"
import { Store } from "../src/runtime/ports/store/Store.js"
import { Events } from "../src/runtime/Events.js"
import { makeEvent } from "../src/domain/makeEvent.js"
import { sessionRow, webhookRow } from "./support/fixtures.js"
import { tempDir } from "./support/gateway.js"
import { storeBackends } from "./support/storeBackends.js"

/** A session's status change and its event, written together (in the caller's transaction, if any). */
const announceStatus = (sessionId: string, status: "ready" | "failed") =>
  Effect.gen(function*() {
    yield* (yield* SessionRepo).update(sessionId, { status })
    yield* (yield* Events).publish(makeEvent("session.status", sessionId, { status, previousStatus: "created", reason: null }))
  })

/** The outbox: every published event is a row of the Store, written with the change it announces. */
for (const backend of storeBackends("outbox.test.ts")) {
  describe.skipIf(backend.skip)(`the outbox on ${backend.name}`, () => {
    it.scoped("an event exists exactly when its change does: both commit, or neither", () =>
      Effect.gen(function*() {
        const dataDir = tempDir()
        const settings = yield* defaultSettings({ dataDir, databaseUrl: yield* backend.freshUrl })
        yield* Effect.gen(function*() {
          const sessions = yield* SessionRepo
          const outbox = yield* EventRepo
          const transactionally = (yield* Store).transactionally
          const row = sessionRow()
          yield* sessions.insert(row)
          const announce = (status: "ready" | "failed") => announceStatus(row.id, status)

          const failed = yield* Effect.exit(transactionally(Effect.zipRight(announce("failed"), Effect.fail("the change was abandoned"))))
          expect(Exit.isFailure(failed)).toBe(true)
          expect(Option.map(yield* sessions.findById(row.id), (found) => found.status)).toEqual(Option.some("created"))
          expect(yield* outbox.undispatched(10)).toEqual([])

          yield* transactionally(announce("ready"))
          expect(Option.map(yield* sessions.findById(row.id), (found) => found.status)).toEqual(Option.some("ready"))
          const [event] = yield* outbox.undispatched(10)
          expect(event).toMatchObject({ event: "session.status", sessionId: row.id, data: { status: "ready" } })
          yield* outbox.markDispatched([event!.id])
          expect(yield* outbox.undispatched(10)).toEqual([])
          expect(Option.fromNullable(yield* outbox.find(event!.id))).toEqual(Option.some(event))

          // With no webhook to fan out to, the oldest waiting events are marked as they stand.
          const waiting = Array.from({ length: 5 }, (_, n) => makeEvent("session.status", row.id, { status: "ready", previousStatus: "created", reason: `${n}` }))
          yield* outbox.appendAll(waiting)
          expect(yield* outbox.markOldestDispatched(3)).toBe(3)
          expect((yield* outbox.undispatched(10)).map((left) => left.id)).toEqual(waiting.slice(3).map((left) => left.id))
          expect(yield* outbox.markOldestDispatched(10)).toBe(2)
          expect(yield* outbox.markOldestDispatched(10)).toBe(0)
          expect(Option.fromNullable(yield* outbox.find(waiting[4]!.id))).toEqual(Option.some(waiting[4]))
        }).pipe(Effect.provide(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings)))))
      }))
    it.scoped("the webhooks' kept copy lives a second of the Effect clock, and a change drops it", () =>
      Effect.gen(function*() {
        const settings = yield* defaultSettings({ dataDir: tempDir(), databaseUrl: yield* backend.freshUrl })
        yield* Effect.gen(function*() {
          const webhooks = yield* WebhookRepo
          const first = webhookRow("http://127.0.0.1:9/first")
          yield* webhooks.insert(first)
          expect(webhooks.kept()).toBeUndefined()
          expect((yield* webhooks.cached()).map((row) => row.id)).toEqual([first.id])
          // The fan-out's synchronous look at the copy sees it while `cached` would not read again.
          expect(webhooks.kept()?.map((row) => row.id)).toEqual([first.id])
          yield* TestClock.adjust("999 millis")
          expect(webhooks.kept()?.map((row) => row.id)).toEqual([first.id])
          yield* TestClock.adjust("1 millis")
          expect(webhooks.kept()).toBeUndefined()

          yield* webhooks.cached()
          expect(webhooks.kept()).toHaveLength(1)
          yield* webhooks.insert(webhookRow("http://127.0.0.1:9/second"))
          expect(webhooks.kept()).toBeUndefined()
          expect(yield* webhooks.cached()).toHaveLength(2)
        }).pipe(Effect.provide(storeFromSettings(settings)))
      }))
    it.scopedLive("live subscribers hear an event once its change has committed, and never one that rolled back", () =>
      Effect.gen(function*() {
        const settings = yield* defaultSettings({ dataDir: tempDir(), databaseUrl: yield* backend.freshUrl })
        yield* Effect.gen(function*() {
          const sessions = yield* SessionRepo
          const events = yield* Events
          const { transactionally } = yield* Store
          const heard = yield* Queue.unbounded<DomainEvent>()
          yield* Effect.forkScoped(Stream.runForEach(yield* events.subscribe, (event) => Queue.offer(heard, event)))
          const row = sessionRow()
          yield* sessions.insert(row)
          const announce = (status: "ready" | "failed") => announceStatus(row.id, status)
          /** What the feed carries within a moment (live delivery is in-process and immediate). */
          const heardSoon = Effect.zipRight(Effect.sleep("100 millis"), Queue.takeAll(heard)).pipe(
            Effect.map((chunk) => Array.from(chunk, (event) => event.data))
          )

          const rolledBack = yield* Effect.exit(transactionally(Effect.zipRight(announce("failed"), Effect.fail("abandoned"))))
          expect(Exit.isFailure(rolledBack)).toBe(true)
          expect(yield* heardSoon).toEqual([])

          // Inside the transaction nothing is heard yet: the change is not there to see.
          const heardBeforeCommit = yield* transactionally(Effect.zipRight(announce("ready"), heardSoon))
          expect(heardBeforeCommit).toEqual([])
          expect(yield* heardSoon).toEqual([{ status: "ready", previousStatus: "created", reason: null }])

          // A savepoint that rolls back takes its event along; the transaction around it commits the rest.
          yield* transactionally(Effect.gen(function*() {
            yield* Effect.exit(transactionally(Effect.zipRight(announce("failed"), Effect.fail("inner abandoned"))))
            yield* events.publish(makeEvent("session.qr", row.id, { qr: "after the savepoint", expiresAt: "2030-01-01T00:00:00.000Z" }))
          }))
          expect(yield* heardSoon).toEqual([{ qr: "after the savepoint", expiresAt: "2030-01-01T00:00:00.000Z" }])

          // Outside a transaction, at once.
          yield* events.publish(makeEvent("session.qr", row.id, { qr: "alone", expiresAt: "2030-01-01T00:00:00.000Z" }))
          expect(yield* heardSoon).toEqual([{ qr: "alone", expiresAt: "2030-01-01T00:00:00.000Z" }])
        }).pipe(Effect.provide(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings)))))
      }))

    it.scoped("a claim over more webhooks than one statement takes finds the few with due deliveries, oldest first, each within its room", () =>
      Effect.gen(function*() {
        const settings = yield* defaultSettings({ dataDir: tempDir(), databaseUrl: yield* backend.freshUrl })
        yield* Effect.gen(function*() {
          const webhooks = yield* WebhookRepo
          const deliveries = yield* DeliveryRepo
          const rows = Array.from({ length: 250 }, (_, n) => webhookRow(`https://receiver.example/${n}`))
          for (const row of rows) yield* webhooks.insert(row)
          const [first, middle, last] = [rows[0]!.id, rows[120]!.id, rows[249]!.id]
          const minute = (n: number) => `2030-01-01T00:${String(n).padStart(2, "0")}:00.000Z`
          const deliveryAt = (webhookId: string, at: string) =>
            Effect.map(deliveries.create(makeEvent("message.ack", "s1", { messageId: at, chatId: "15550001111@c.us", status: "read", ack: 3, previousStatus: "delivered" }), [webhookId], at), ([id]) => id!)
          // The first webhook: five due; the middle one: two due and one not yet; the last: only a delivered one.
          const firsts = [yield* deliveryAt(first, minute(1)), yield* deliveryAt(first, minute(3)), yield* deliveryAt(first, minute(5))]
          firsts.push(yield* deliveryAt(first, minute(6)), yield* deliveryAt(first, minute(7)))
          const middles = [yield* deliveryAt(middle, minute(2)), yield* deliveryAt(middle, minute(4))]
          yield* deliveryAt(middle, minute(30))
          const delivered = yield* deliveryAt(last, minute(1))
          yield* deliveries.recordAttempts([{
            deliveryId: delivered,
            outcome: { attempt: { attempt: 1, at: minute(1), statusCode: 200, error: null, durationMs: 3 }, status: "delivered", nextAttemptAt: null }
          }])

          // Every webhook has room for 3; the first already holds its oldest.
          const rooms = rows.map((row) => ({ webhookId: row.id, room: 3, except: row.id === first ? [firsts[0]!] : [] }))
          const due = yield* deliveries.due(minute(10), 100, rooms)
          expect(due.map((delivery) => delivery.id)).toEqual([middles[0], firsts[1], middles[1], firsts[2], firsts[3]])
          // A page smaller than what is due: the oldest of them.
          expect((yield* deliveries.due(minute(10), 2, rooms)).map((delivery) => delivery.id)).toEqual([middles[0], firsts[1]])
          // Nothing due yet for anyone.
          expect(yield* deliveries.due(minute(0), 100, rooms)).toEqual([])
        }).pipe(Effect.provide(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings)))))
      }))
  })
}
