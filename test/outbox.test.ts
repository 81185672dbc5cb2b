import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { defaultSettings } from "../src/app/Config.js"
import { storeFromSettings } from "../src/app/App.js"
import { EventRepo } from "../src/runtime/ports/store/EventRepo.js"
import { SessionRepo } from "../src/runtime/ports/store/SessionRepo.js"
import { makeTransactionally } from "../src/layers/store/transaction.js"
import { Events } from "../src/runtime/Events.js"
import { makeEvent } from "../src/domain/makeEvent.js"
import { sessionRow } from "./support/fixtures.js"
import { tempDir } from "./support/gateway.js"
import { storeBackends } from "./support/storeBackends.js"

/** The outbox: every published event is a row of the Store, written with the change it announces. */
for (const backend of storeBackends("outbox.test.ts")) {
  describe.skipIf(backend.skip)(`the outbox on ${backend.name}`, () => {
    it.scoped("an event exists exactly when its change does: both commit, or neither", () =>
      Effect.gen(function*() {
        const dataDir = tempDir()
        const settings = yield* defaultSettings({ dataDir, databaseUrl: yield* backend.freshUrl })
        yield* Effect.gen(function*() {
          const sessions = yield* SessionRepo
          const events = yield* Events
          const outbox = yield* EventRepo
          const transactionally = yield* makeTransactionally
          const row = sessionRow()
          yield* sessions.insert(row)
          const announce = (status: "ready" | "failed") =>
            Effect.zipRight(
              sessions.update(row.id, { status }),
              events.publish(makeEvent("session.status", row.id, { status, previousStatus: "created", reason: null }))
            )

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
  })
}
