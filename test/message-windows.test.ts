import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Option, TestClock } from "effect"
import type { ChatId } from "../src/domain/Ids.js"
import { MessageActions } from "../src/services/MessageActions.js"
import { advanceUntil, startCore } from "./support/core.js"

/** WhatsApp's windows for editing (15 minutes) and deleting for everyone (about 2 days), on the TestClock. */
describe("edit and revoke windows", () => {
  it.scoped("an own message can be edited for 15 minutes and deleted for everyone for 2 days, then 409", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ sandboxPairDelay: Duration.millis(10) })
      const actions = Context.get(core.context, MessageActions)
      const session = yield* core.sessions.create({ name: "windows" })
      yield* core.supervisor.start(session.id)
      yield* advanceUntil(Effect.orDie(Effect.map(core.sessions.get(session.id), (s) => s.status === "ready")))
      const send = (text: string) =>
        Effect.gen(function*() {
          const { messageId } = yield* core.messaging.sendText(session.id, { chatId: "15550003333@c.us" as ChatId, text })
          yield* advanceUntil(Effect.orDie(Effect.map(core.messaging.get(session.id, messageId), (m) => m.status !== "pending")))
          return messageId
        })
      /** Engine calls wait on timers (the network's ack delay, the call's timeout): run the clock until one settles. */
      const settled = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(effect)
          yield* advanceUntil(Effect.map(Fiber.poll(fiber), Option.isSome), "10 millis")
          return yield* Fiber.join(fiber)
        })
      const refusal = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.flip(settled(effect)), (error) => [error._tag, "code" in error ? error.code : undefined])

      const edited = yield* send("edit me")
      const revoked = yield* send("revoke me")
      yield* TestClock.adjust(Duration.minutes(14))
      expect((yield* settled(actions.edit(session.id, edited, "edited in time"))).text).toBe("edited in time")
      yield* TestClock.adjust(Duration.minutes(2))
      expect(yield* refusal(actions.edit(session.id, edited, "too late"))).toEqual(["Conflict", "EDIT_NOT_ALLOWED"])
      expect((yield* core.messaging.get(session.id, edited)).text).toBe("edited in time")

      yield* TestClock.adjust(Duration.hours(47))
      expect((yield* settled(actions.remove(session.id, revoked, "everyone"))).revoked).toBe(true)
      const late = yield* send("too old to revoke")
      yield* TestClock.adjust(Duration.hours(49))
      expect(yield* refusal(actions.remove(session.id, late, "everyone"))).toEqual(["Conflict", "REVOKE_NOT_ALLOWED"])
      // Hiding it here is always allowed.
      expect((yield* settled(actions.remove(session.id, late, "me"))).revoked).toBe(true)
    }))
})
