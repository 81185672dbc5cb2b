import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { defaultSessionSettings, type HistorySync } from "../src/domain/SessionSettings.js"
import type { EngineEvent } from "../src/runtime/Engine.js"
import { RECENT_HISTORY_PER_CHAT } from "../src/runtime/engines/sandbox/Chats.js"
import { sandboxPhoneOf } from "../src/runtime/engines/sandbox/SandboxNetwork.js"
import { drainedOf, openReady, openSession, sandbox, unlinkedAuth, waitFor } from "./support/sandboxSessions.js"

/**
 * The sandbox's phones keep their conversations, so that linking a session brings its history
 * (as much as `historySync` asks), `requestHistory` brings older messages, and chat changes
 * apply to the chats the account has.
 */

type History = Extract<EngineEvent, { _tag: "HistoryReceived" }>
const texts = (event: History) => event.batch.messages.map((message) => message.text)

/** Alice writes `count` numbered texts to the phone of `to`, which has never been linked. */
const aliceWrites = (to: string, count: number) =>
  Effect.gen(function*() {
    const alice = yield* openReady("alice")
    for (let n = 1; n <= count; n++) yield* alice.sendText(`${sandboxPhoneOf(to)}@c.us`, `text ${n}`)
    return alice
  })

/** Links `sessionId` for the first time (the phone scans after pairDelay) with that history setting. */
const link = (sessionId: string, historySync: HistorySync) =>
  Effect.gen(function*() {
    const session = yield* openSession(sessionId, unlinkedAuth, defaultSessionSettings(historySync))
    yield* TestClock.adjust("5 seconds")
    yield* waitFor(session, "Ready")
    return session
  })

describe("sandbox chats and history", () => {
  it.scoped("a newly linked session gets the newest messages of each chat with recent, all with full, none with off", () =>
    Effect.gen(function*() {
      const alice = yield* aliceWrites("bob", RECENT_HISTORY_PER_CHAT + 2)
      for (let n = 1; n <= 3; n++) yield* alice.sendText(`${sandboxPhoneOf("carol")}@c.us`, `carol ${n}`)
      yield* alice.sendText(`${sandboxPhoneOf("dave")}@c.us`, "dave 1")

      const bob = yield* link("bob", "recent")
      const [recent] = yield* drainedOf(bob, "HistoryReceived")
      expect(recent!.batch).toMatchObject({ chats: [{ chatId: alice.chatId }], progress: 100, onDemand: false })
      expect(recent!.batch.messages).toHaveLength(RECENT_HISTORY_PER_CHAT)
      expect(texts(recent!)[0]).toBe("text 3")
      expect(recent!.batch.messages[0]).toMatchObject({ chatId: alice.chatId, from: alice.chatId, fromPhone: alice.chatId })

      const carol = yield* link("carol", "full")
      const [full] = yield* drainedOf(carol, "HistoryReceived")
      expect(texts(full!)).toEqual(["carol 1", "carol 2", "carol 3"])

      const dave = yield* link("dave", "off")
      expect(yield* drainedOf(dave, "HistoryReceived")).toEqual([])
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("the account's own messages come back fromMe; requestHistory answers with what is older than the anchor", () =>
    Effect.gen(function*() {
      const alice = yield* aliceWrites("bob", 4)
      const bob = yield* link("bob", "off")
      const sent = yield* bob.sendText(alice.chatId, "from bob")
      yield* bob.chats.requestHistory(alice.chatId, 2, { target: { engineMessageId: sent.engineMessageId, fromMe: true, from: bob.chatId }, timestamp: sent.timestamp })
      const [older] = yield* drainedOf(bob, "HistoryReceived")
      expect(older!.batch.onDemand).toBe(true)
      expect(texts(older!)).toEqual(["text 3", "text 4"])

      yield* alice.chats.requestHistory(bob.chatId, 10, null)
      const [all] = yield* drainedOf(alice, "HistoryReceived")
      expect(all!.batch.messages.map((m) => [m.text, m.fromMe === true])).toEqual([
        ["text 1", true],
        ["text 2", true],
        ["text 3", true],
        ["text 4", true],
        ["from bob", false]
      ])
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("chat changes apply to chats the account has; a deleted chat is gone from the phone too", () =>
    Effect.gen(function*() {
      const alice = yield* aliceWrites("bob", 1)
      const bob = yield* link("bob", "off")
      yield* bob.chats.modify(alice.chatId, { kind: "archive", archived: true }, null)
      const stranger = yield* Effect.flip(bob.chats.modify("15559990001@c.us", { kind: "pin", pinned: true }, null))
      expect(stranger).toMatchObject({ code: "CHAT_NOT_FOUND", refusal: "not_found" })
      const noGroup = yield* Effect.flip(bob.chats.modify("120363000000000001@g.us", { kind: "pin", pinned: true }, null))
      expect(noGroup.refusal).toBe("not_found")

      yield* bob.chats.modify(alice.chatId, { kind: "delete" }, null)
      const deleted = yield* Effect.flip(bob.chats.requestHistory(alice.chatId, 10, null))
      expect(deleted.code).toBe("CHAT_NOT_FOUND")
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))
})
