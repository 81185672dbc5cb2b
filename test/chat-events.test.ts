import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { defaultSessionSettings } from "../src/domain/SessionSettings.js"
import { EngineEvent, type InboundMessage } from "../src/runtime/Engine.js"
import type { HistoryBatch } from "../src/runtime/EngineAccount.js"
import { handleEngineEvent } from "../src/runtime/InboundEvents.js"
import { ChatRepo } from "../src/runtime/ports/store/ChatRepo.js"
import { MessageRepo } from "../src/runtime/ports/store/MessageRepo.js"
import { inboundContext, withSessionStore } from "./support/inboundStore.js"

/**
 * What the phone tells of the account's chats, through the runtime into a real SQLite Store:
 * its own changes to chats (archived, read, renamed, deleted there) and its history batches.
 */

const context = inboundContext()

const friend = "15550002222@c.us"
const message = (engineMessageId: string, text: string, minute: number, fromMe = false): InboundMessage => ({
  engineMessageId,
  chatId: friend,
  from: fromMe ? "15550001111@c.us" : friend,
  fromMe,
  fromPhone: fromMe ? "15550001111@c.us" : friend,
  fromLid: null,
  type: "text",
  text,
  timestamp: new Date(`2026-01-01T00:${String(minute).padStart(2, "0")}:00.000Z`)
})
const batch = (messages: ReadonlyArray<InboundMessage>, overrides: Partial<HistoryBatch> = {}): HistoryBatch => ({
  chats: [{ chatId: friend, name: "Friend" }],
  messages,
  contacts: [{ chatId: friend, name: "Friend" }],
  progress: 40,
  onDemand: false,
  ...overrides
})

/** A fresh Store whose session imports history as `historySync` says. */
const withHistorySync = (historySync: "off" | "recent", body: Parameters<typeof withSessionStore>[1]) =>
  withSessionStore({ settings: defaultSessionSettings(historySync) }, body)

describe("the phone's chats and history", () => {
  it.scoped("imports a history batch: own and received messages, counted once, no per-message event, duplicates skipped", () =>
    withHistorySync("recent", (seen) =>
      Effect.gen(function*() {
        const live = message("LIVE1", "live", 30)
        yield* handleEngineEvent(EngineEvent.MessageReceived({ message: live }), context)
        const history = [message("H1", "hello", 1), message("H2", "hi back", 2, true), live]
        yield* handleEngineEvent(EngineEvent.HistoryReceived({ batch: batch(history) }), context)

        const stored = (yield* (yield* MessageRepo).list("s1", { chatId: friend }, Option.none())).items
        expect(stored.map((m) => [m.text, m.source, m.fromMe, m.status])).toEqual([
          ["live", "live", false, "delivered"],
          ["hi back", "history", true, "sent"],
          ["hello", "history", false, "read"]
        ])
        const chat = Option.getOrThrow(yield* (yield* ChatRepo).find("s1", friend))
        expect(chat).toMatchObject({ name: "Friend", unreadCount: 1, lastMessage: { text: "live" } })
        const events = yield* seen
        expect(events.filter((e) => e.event === "message.received")).toHaveLength(1)
        expect(events.filter((e) => e.event === "session.history").map((e) => e.data)).toEqual([{ chats: 1, messages: 2, progress: 40 }])
      })))

  it.scoped("with historySync off, the sync on linking is not imported, but history asked for is", () =>
    withHistorySync("off", (seen) =>
      Effect.gen(function*() {
        yield* handleEngineEvent(EngineEvent.HistoryReceived({ batch: batch([message("H1", "hello", 1)]) }), context)
        expect((yield* (yield* MessageRepo).list("s1", {}, Option.none())).total).toBe(0)
        expect(Option.isNone(yield* (yield* ChatRepo).find("s1", friend))).toBe(true)
        yield* handleEngineEvent(EngineEvent.HistoryReceived({ batch: batch([message("H1", "hello", 1)], { onDemand: true, progress: null }) }), context)
        expect((yield* (yield* MessageRepo).list("s1", {}, Option.none())).total).toBe(1)
        expect((yield* seen).filter((e) => e.event === "session.history").map((e) => e.data)).toEqual([{ chats: 1, messages: 1, progress: null }])
      })))

  it.scoped("follows the phone's changes to chats, announcing only what changed; a chat read there is read here; a chat deleted there goes with its messages", () =>
    withHistorySync("recent", (seen) =>
      Effect.gen(function*() {
        yield* handleEngineEvent(EngineEvent.MessageReceived({ message: message("M1", "one", 1) }), context)
        yield* handleEngineEvent(EngineEvent.MessageReceived({ message: message("M2", "two", 2) }), context)
        const changed = (changes: Parameters<typeof EngineEvent.ChatsChanged>[0]["changes"]) =>
          handleEngineEvent(EngineEvent.ChatsChanged({ changes }), context)
        yield* changed([{ chatId: friend, archived: true, unreadCount: 0, pinned: false }])
        // Read on the phone: the messages are read here too, so a later read through the API
        // (which counts the incoming messages still delivered) does not count them again.
        const messages = yield* MessageRepo
        const statuses = Effect.map(messages.list("s1", { chatId: friend }, Option.none()), (page) => page.items.map((m) => [m.text, m.status]))
        expect(yield* statuses).toEqual([["two", "read"], ["one", "read"]])
        // One more arrives: it alone is unread, and a read on the phone that is not a whole-chat read leaves it so.
        yield* handleEngineEvent(EngineEvent.MessageReceived({ message: message("M3", "three", 3) }), context)
        yield* changed([{ chatId: friend, pinned: true }])
        expect(yield* statuses).toEqual([["three", "delivered"], ["two", "read"], ["one", "read"]])
        expect(Option.getOrThrow(yield* (yield* ChatRepo).find("s1", friend)).unreadCount).toBe(1)
        yield* changed([{ chatId: friend, unreadCount: 0, pinned: false }])
        expect(yield* statuses).toEqual([["three", "read"], ["two", "read"], ["one", "read"]])
        yield* changed([{ chatId: friend, mutedUntil: new Date("2027-01-01T00:00:00.000Z"), name: "Best friend" }])
        const chats = yield* ChatRepo
        expect(Option.getOrThrow(yield* chats.find("s1", friend))).toMatchObject({
          archived: true,
          unreadCount: 0,
          pinned: false,
          mutedUntil: "2027-01-01T00:00:00.000Z",
          name: "Best friend"
        })
        yield* changed([{ chatId: friend, deleted: true }])
        expect(Option.isNone(yield* chats.find("s1", friend))).toBe(true)
        expect((yield* messages.list("s1", { chatId: friend }, Option.none())).total).toBe(0)
        const updates = (yield* seen).filter((e) => e.event === "chat.update").map((e) => e.data)
        expect(updates).toEqual([
          { chatId: friend, changes: { archived: true, unreadCount: 0 } },
          { chatId: friend, changes: { pinned: true } },
          { chatId: friend, changes: { unreadCount: 0, pinned: false } },
          { chatId: friend, changes: { mutedUntil: "2027-01-01T00:00:00.000Z", name: "Best friend" } },
          { chatId: friend, changes: { deleted: true } }
        ])
      })))
})
