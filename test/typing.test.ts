import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import { ChatId } from "../src/domain/Ids.js"
import type { TypingMs } from "../src/domain/Message.js"
import { autoTypingMs } from "../src/runtime/typing.js"
import { advanceUntil, type Core, letFibersRun, startCore } from "./support/core.js"
import { opus } from "./support/mediaSamples.js"

/**
 * `typingMs`: the session shows typing (recording before a voice note) in its turn, for that
 * long on the Clock, then sends, then stops. The TestClock runs the wait; the sandbox engine
 * records what it was handed.
 */

const readyPair = (core: Core) =>
  Effect.forEach(["alice", "bob"], (name) =>
    Effect.gen(function*() {
      const session = yield* core.sessions.create({ name })
      yield* core.supervisor.start(session.id)
      yield* advanceUntil(Effect.map(Effect.orDie(core.sessions.get(session.id)), (s) => s.status === "ready"))
      return yield* core.sessions.get(session.id)
    })).pipe(Effect.map(([alice, bob]) => ({ alice: alice!, bob: bob!, bobChat: ChatId.make(`${bob!.phone}@c.us`) })))

const sentCount = (core: Core) => Effect.map(core.sentCommands, (commands) => commands.length)

/** Sends a text with typingMs and returns how long, on the clock, it took to reach the engine. */
const clockTimeToSend = (core: Core, send: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    const before = yield* sentCount(core)
    const started = yield* Clock.currentTimeMillis
    yield* Effect.orDie(send)
    yield* advanceUntil(Effect.map(sentCount(core), (count) => count > before), "50 millis")
    return (yield* Clock.currentTimeMillis) - started
  })

describe("typingMs", () => {
  it.scoped("shows typing for that long before the text goes out, then paused", () =>
    Effect.gen(function*() {
      const core = yield* startCore()
      const { alice, bobChat } = yield* readyPair(core)
      const text = (typingMs: TypingMs) => core.messaging.sendText(alice.id, { chatId: bobChat, text: "on my way", typingMs })

      const took = yield* clockTimeToSend(core, text(3_000))
      expect(took).toBeGreaterThanOrEqual(3_000)
      expect(took).toBeLessThanOrEqual(3_100)
      // "paused" follows the send once the engine has answered: wait for it, on the clock.
      yield* advanceUntil(Effect.map(core.presenceCommands, (list) => list.filter((p) => p.sessionId === alice.id).length >= 2), "50 millis")
      const presence = (yield* core.presenceCommands).filter((p) => p.sessionId === alice.id)
      expect(presence.map((p) => ({ chatId: "chatId" in p ? p.chatId : null, state: p.state }))).toEqual([
        { chatId: bobChat, state: "typing" },
        { chatId: bobChat, state: "paused" }
      ])
      expect(presence[1]!.at - presence[0]!.at).toBeGreaterThanOrEqual(3_000)

      // Without typingMs (or 0) nothing waits and no presence is sent.
      expect(yield* clockTimeToSend(core, text(0))).toBeLessThanOrEqual(50)
      expect(yield* clockTimeToSend(core, core.messaging.sendText(alice.id, { chatId: bobChat, text: "plain" }))).toBeLessThanOrEqual(50)
      expect((yield* core.presenceCommands).filter((p) => p.sessionId === alice.id)).toHaveLength(2)
    }))

  it.scoped("\"auto\" takes 50 ms a character, 1 s to 8 s", () =>
    Effect.gen(function*() {
      expect([autoTypingMs("ok"), autoTypingMs("x".repeat(60)), autoTypingMs("x".repeat(1_000)), autoTypingMs("😀".repeat(30))])
        .toEqual([1_000, 3_000, 8_000, 1_500])
      const core = yield* startCore()
      const { alice, bobChat } = yield* readyPair(core)
      const took = yield* clockTimeToSend(core, core.messaging.sendText(alice.id, { chatId: bobChat, text: "x".repeat(60), typingMs: "auto" }))
      expect(took).toBeGreaterThanOrEqual(3_000)
      expect(took).toBeLessThanOrEqual(3_100)
    }))

  it.scoped("a voice note shows recording", () =>
    Effect.gen(function*() {
      const core = yield* startCore()
      const { alice, bobChat } = yield* readyPair(core)
      const note = core.messaging.sendMedia(alice.id, { chatId: bobChat, kind: "audio", ptt: true, source: { data: opus() }, typingMs: 2_000 })
      expect(yield* clockTimeToSend(core, note)).toBeGreaterThanOrEqual(2_000)
      yield* advanceUntil(Effect.map(core.presenceCommands, (list) => list.length >= 2), "50 millis")
      expect((yield* core.presenceCommands).map((p) => p.state)).toEqual(["recording", "paused"])
    }))

  it.scoped("a message cancelled while typing is not sent", () =>
    Effect.gen(function*() {
      const core = yield* startCore()
      const { alice, bobChat } = yield* readyPair(core)
      const { batchId } = yield* core.messaging.sendBulk(alice.id, {
        messages: [{ type: "text", chatId: bobChat, text: "never mind", typingMs: 10_000 }]
      })
      yield* advanceUntil(Effect.map(core.presenceCommands, (list) => list.length === 1), "50 millis")
      yield* core.messaging.cancelBatch(alice.id, batchId)
      yield* TestClock.adjust("11 seconds")
      yield* letFibersRun
      expect(yield* sentCount(core)).toBe(0)
      expect((yield* core.presenceCommands).map((p) => p.state)).toEqual(["typing", "paused"])
    }))

  it.scoped("bob sees alice typing, then paused, as presence.update events", () =>
    Effect.gen(function*() {
      const core = yield* startCore()
      const { alice, bob, bobChat } = yield* readyPair(core)
      yield* clockTimeToSend(core, core.messaging.sendText(alice.id, { chatId: bobChat, text: "typing first", typingMs: 1_000 }))
      const heard = Effect.map(core.events(bob.id), (events) =>
        events.filter((e) => e.event === "presence.update").map((e) => e.data as { chatId: string; state: string }))
      yield* advanceUntil(Effect.map(heard, (updates) => updates.some((u) => u.state === "paused")), "50 millis")
      expect((yield* heard).map((u) => [u.chatId, u.state])).toEqual([
        [`${alice.phone}@c.us`, "typing"],
        [`${alice.phone}@c.us`, "paused"]
      ])
    }))
})
