import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Fiber, Option, TestClock } from "effect"
import type { ChatId } from "../src/domain/Ids.js"
import { MessageActions, NETWORK_WAIT } from "../src/services/MessageActions.js"
import { advanceUntil, letFibersRun, startCore } from "./support/core.js"

/** A core on the TestClock with one ready sandbox session, and its message actions. */
const readySession = (name: string) =>
  Effect.gen(function*() {
    const core = yield* startCore({ sandboxPairDelay: Duration.millis(10) })
    const session = yield* core.sessions.create({ name })
    yield* core.supervisor.start(session.id)
    yield* advanceUntil(Effect.orDie(Effect.map(core.sessions.get(session.id), (s) => s.status === "ready")))
    return { core, session, actions: Context.get(core.context, MessageActions) }
  })

/**
 * WhatsApp's windows: editing for 15 minutes after sending, on the TestClock; deleting for
 * everyone for about 2 days. Days of TestClock would fire every periodic timer of the core on
 * the way, so a message two days old is one whose stored send time says so.
 */
describe("edit and revoke windows", () => {
  it.scoped("an own message can be edited for 15 minutes and deleted for everyone for 2 days, then 409", () =>
    Effect.gen(function*() {
      const { actions, core, session } = yield* readySession("windows")
      const sql = Context.get(core.context, SqlClient.SqlClient)
      const send = (text: string) =>
        Effect.gen(function*() {
          const { messageId } = yield* core.messaging.sendText(session.id, { chatId: "15550003333@c.us" as ChatId, text })
          yield* advanceUntil(Effect.orDie(Effect.map(core.messaging.get(session.id, messageId), (m) => m.status !== "pending")))
          return messageId
        })
      /** Engine calls wait on timers (the network's ack delay): run the clock until the call settles. */
      const settled = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(effect)
          yield* advanceUntil(Effect.map(Fiber.poll(fiber), Option.isSome), "10 millis")
          return yield* Fiber.join(fiber)
        })
      const refusal = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.flip(settled(effect)), (error) => [error._tag, "code" in error ? error.code : undefined])
      const sentHoursAgo = (messageId: string, hours: number) =>
        Effect.gen(function*() {
          const { timestamp } = yield* core.messaging.get(session.id, messageId)
          const earlier = new Date(Date.parse(timestamp) - hours * 3_600_000).toISOString()
          yield* sql`UPDATE messages SET timestamp = ${earlier} WHERE id = ${messageId}`
        })

      const edited = yield* send("edit me")
      yield* TestClock.adjust(Duration.minutes(14))
      expect((yield* settled(actions.edit(session.id, edited, "edited in time"))).text).toBe("edited in time")
      yield* TestClock.adjust(Duration.minutes(2))
      expect(yield* refusal(actions.edit(session.id, edited, "too late"))).toEqual(["Conflict", "EDIT_NOT_ALLOWED"])
      expect((yield* core.messaging.get(session.id, edited)).text).toBe("edited in time")

      const recent = yield* send("revoke me")
      yield* sentHoursAgo(recent, 47)
      expect((yield* settled(actions.remove(session.id, recent, "everyone"))).revoked).toBe(true)
      const old = yield* send("too old to revoke")
      yield* sentHoursAgo(old, 49)
      expect(yield* refusal(actions.remove(session.id, old, "everyone"))).toEqual(["Conflict", "REVOKE_NOT_ALLOWED"])
      expect((yield* core.messaging.get(session.id, old)).revoked).toBe(false)
      // Hiding it here is always allowed.
      expect((yield* settled(actions.remove(session.id, old, "me"))).revoked).toBe(true)
    }))

  it.scoped("an action on a message still being sent waits for it up to NETWORK_WAIT, then is 409 with the message pending", () =>
    Effect.gen(function*() {
      const { actions, core, session } = yield* readySession("in-flight")
      // 30 s of "typing" hold the send; the edit's wait ends first.
      const { messageId } = yield* core.messaging.sendText(session.id, { chatId: "15550003333@c.us" as ChatId, text: "slow", typingMs: 30_000 })
      const tooSoon = yield* Effect.fork(Effect.flip(actions.edit(session.id, messageId, "slow, edited")))
      yield* letFibersRun
      yield* TestClock.adjust(Duration.subtract(NETWORK_WAIT, Duration.millis(1)))
      yield* letFibersRun
      expect(Option.isNone(yield* Fiber.poll(tooSoon)), "answered before the wait was over").toBe(true)
      yield* TestClock.adjust(Duration.millis(1))
      const refused = yield* Fiber.join(tooSoon)
      expect(refused).toMatchObject({ _tag: "Conflict", code: "EDIT_NOT_ALLOWED", message: expect.stringContaining("status pending") })

      // Asked again 5 s before the send goes (at 30 s), the edit is answered once it went through.
      yield* TestClock.adjust(Duration.seconds(15))
      expect((yield* core.messaging.get(session.id, messageId)).status).toBe("pending")
      const inTime = yield* Effect.fork(actions.edit(session.id, messageId, "slow, edited"))
      yield* advanceUntil(Effect.map(Fiber.poll(inTime), Option.isSome), "1 second", 15)
      expect((yield* Fiber.join(inTime))).toMatchObject({ text: "slow, edited", edits: [{ text: "slow" }] })
    }))

  it.scoped("an action waiting on a message still being sent is refused as soon as the send fails (its batch cancelled)", () =>
    Effect.gen(function*() {
      const { actions, core, session } = yield* readySession("cancelled")
      // The first item's 30 s of "typing" hold the lane; the second waits, pending.
      const chatId = "15550003333@c.us" as ChatId
      const { batchId } = yield* core.messaging.sendBulk(session.id, {
        messages: [{ type: "text", chatId, text: "first", typingMs: 30_000 }, { type: "text", chatId, text: "second" }]
      })
      const second = (yield* core.messaging.getBatch(session.id, batchId)).items[1]!.messageId
      const edit = yield* Effect.fork(Effect.flip(actions.edit(session.id, second, "second, edited")))
      yield* letFibersRun
      expect(Option.isNone(yield* Fiber.poll(edit)), "answered before the batch was cancelled").toBe(true)
      yield* core.messaging.cancelBatch(session.id, batchId)
      // No time passes on the TestClock: the cancel itself ends the wait.
      yield* advanceUntil(Effect.map(Fiber.poll(edit), Option.isSome), "0 millis", 20)
      expect(yield* Fiber.join(edit)).toMatchObject({ _tag: "Conflict", code: "EDIT_NOT_ALLOWED", message: expect.stringContaining("status failed") })
    }))
})
