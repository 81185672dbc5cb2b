import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Queue, Stream } from "effect"
import type { DomainEvent } from "../src/domain/Events.js"
import { defaultSettings } from "../src/app/Config.js"
import { storeFromSettings } from "../src/app/App.js"
import { EventRepo } from "../src/runtime/ports/store/EventRepo.js"
import { SessionRepo } from "../src/runtime/ports/store/SessionRepo.js"
import { Store } from "../src/runtime/ports/store/Store.js"
import { Events } from "../src/runtime/Events.js"
import { makeEvent } from "../src/domain/makeEvent.js"
import { sessionRow } from "./support/fixtures.js"
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
        }).pipe(Effect.provide(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings)))))
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
            yield* events.publish(makeEvent("session.qr", row.id, { qr: "after the savepoint" }))
          }))
          expect(yield* heardSoon).toEqual([{ qr: "after the savepoint" }])

          // Outside a transaction, at once.
          yield* events.publish(makeEvent("session.qr", row.id, { qr: "alone" }))
          expect(yield* heardSoon).toEqual([{ qr: "alone" }])
        }).pipe(Effect.provide(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings)))))
      }))
  })
}
