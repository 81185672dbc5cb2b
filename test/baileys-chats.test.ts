import { describe, expect, it } from "@effect/vitest"
import { Boom } from "@hapi/boom"
import type { ChatModification } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { EngineEvent } from "../src/runtime/Engine.js"
import type { ChatAnchor, ChatModification as Modification } from "../src/runtime/EngineAccount.js"
import { type ChatSocket, fromChatsDelete, fromChatsUpdate, makeChatOperations } from "../src/runtime/engines/baileys/chats.js"
import { fromHistorySet } from "../src/runtime/engines/baileys/history.js"
import { ALICE, BOB, BOB_LID, GROUP, mapping, refusalOf, stub, T } from "./support/baileysSocketStub.js"

/**
 * The chat list's app state at the Baileys socket boundary: the loopback peer carries no app
 * state (WhatsApp's `syncd` patches, encrypted with keys the phone shares), so what the gateway
 * asks of `chatModify` and what `chats.update` / `chats.delete` say are proven here, against
 * Baileys' own types, with a stub socket. (History, calls and status: baileys-account.test.ts.)
 */

const bobChat = `${BOB}@c.us`
const bobWire = `${BOB}@s.whatsapp.net`
const newest: ChatAnchor = { target: { engineMessageId: "3EB0NEWEST", fromMe: false, from: bobChat }, timestamp: new Date(T * 1000) }
const lastMessages = [{ key: { remoteJid: bobWire, fromMe: false, id: "3EB0NEWEST" }, messageTimestamp: T }]

/** What `modify` handed `chatModify`, and for which JID. */
const modified = (modification: Modification, anchor: ChatAnchor | null = newest, chatId = bobChat) =>
  Effect.gen(function*() {
    const calls: Array<[ChatModification, string]> = []
    const sock = stub<ChatSocket>({ chatModify: async (mod, jid) => void calls.push([mod, jid]) })
    yield* makeChatOperations(sock).modify(chatId, modification, anchor)
    return calls
  })

describe("chatModify: the gateway's chat changes as app-state patches", () => {
  it.effect("archive, mark unread and delete name the newest message; pin and mute do not", () =>
    Effect.gen(function*() {
      expect(yield* modified({ kind: "archive", archived: true })).toEqual([[{ archive: true, lastMessages }, bobWire]])
      expect(yield* modified({ kind: "archive", archived: false })).toEqual([[{ archive: false, lastMessages }, bobWire]])
      expect(yield* modified({ kind: "markUnread" })).toEqual([[{ markRead: false, lastMessages }, bobWire]])
      expect(yield* modified({ kind: "delete" })).toEqual([[{ delete: true, lastMessages }, bobWire]])
      expect(yield* modified({ kind: "pin", pinned: true })).toEqual([[{ pin: true }, bobWire]])
    }))

  it.effect("mute until a moment is its ms timestamp; null unmutes", () =>
    Effect.gen(function*() {
      const until = new Date("2026-12-01T09:00:00Z")
      expect(yield* modified({ kind: "mute", until })).toEqual([[{ mute: until.getTime() }, bobWire]])
      expect(yield* modified({ kind: "mute", until: null })).toEqual([[{ mute: null }, bobWire]])
    }))

  it.effect("in a group, someone else's newest message is named with its participant; a chat with no message held, with none", () =>
    Effect.gen(function*() {
      const theirs: ChatAnchor = { target: { engineMessageId: "3EB0G", fromMe: false, from: bobChat }, timestamp: new Date(T * 1000) }
      expect(yield* modified({ kind: "archive", archived: true }, theirs, GROUP)).toEqual([[
        { archive: true, lastMessages: [{ key: { remoteJid: GROUP, fromMe: false, id: "3EB0G", participant: bobWire }, messageTimestamp: T }] },
        GROUP
      ]])
      expect(yield* modified({ kind: "delete" }, null)).toEqual([[{ delete: true, lastMessages: [] }, bobWire]])
    }))

  it.effect("no app-state keys from the phone yet: a transient conflict, APP_STATE_NOT_READY; other failures keep their cause", () =>
    Effect.gen(function*() {
      const failing = (error: unknown) => makeChatOperations(stub<ChatSocket>({ chatModify: () => Promise.reject(error) }))
      const notReady = yield* Effect.flip(failing(new Boom("App state key not present!", { statusCode: 400 })).modify(bobChat, { kind: "pin", pinned: true }, null))
      expect(refusalOf(notReady)).toEqual({ code: "APP_STATE_NOT_READY", refusal: "conflict", transient: true })
      const lost = yield* Effect.flip(failing(new Boom("Connection Closed", { statusCode: 428 })).modify(bobChat, { kind: "pin", pinned: true }, null))
      expect(lost).toMatchObject({ code: "CHAT_MODIFY_FAILED_428", transient: true })
    }))
})

describe("chats.update / chats.delete → ChatsChanged", () => {
  const phoneOfLid = mapping({ [BOB_LID]: bobWire })
  const changesOf = (events: ReadonlyArray<EngineEvent>) => events.flatMap((e) => (e._tag === "ChatsChanged" ? e.changes : []))

  it.effect("the phone's app-state changes: archive, pin (a timestamp or null), mute (ms; -1 forever), read (0) and marked unread (-1)", () =>
    Effect.gen(function*() {
      const events = yield* fromChatsUpdate([
        { id: bobWire, archived: true },
        { id: BOB_LID, pinned: T },
        { id: GROUP, pinned: null },
        { id: bobWire, muteEndTime: (T + 3600) * 1000 },
        { id: GROUP, muteEndTime: -1 },
        { id: bobWire, muteEndTime: null },
        { id: bobWire, unreadCount: 0 },
        { id: GROUP, unreadCount: -1 }
      ], phoneOfLid)
      expect(changesOf(events)).toEqual([
        { chatId: bobChat, archived: true },
        { chatId: bobChat, pinned: true },
        { chatId: GROUP, pinned: false },
        { chatId: bobChat, mutedUntil: new Date((T + 3600) * 1000) },
        { chatId: GROUP, mutedUntil: new Date("9999-12-31T23:59:59.000Z") },
        { chatId: bobChat, mutedUntil: null },
        { chatId: bobChat, unreadCount: 0 },
        { chatId: GROUP, unreadCount: -1 }
      ])
    }))

  it.effect("what Baileys derives from each message (an unread increment, unarchive) is left to the runtime; a group's new subject names it", () =>
    Effect.gen(function*() {
      expect(yield* fromChatsUpdate([{ id: bobWire, unreadCount: 1, archived: false, conversationTimestamp: T, messages: [] }])).toEqual([])
      expect(changesOf(yield* fromChatsUpdate([{ id: GROUP, name: "Renamed", conversationTimestamp: T }]))).toEqual([{ chatId: GROUP, name: "Renamed" }])
      expect(yield* fromChatsUpdate([{ id: "status@broadcast", archived: true }])).toEqual([])
    }))

  it.effect("a chat deleted on another device", () =>
    Effect.gen(function*() {
      expect(changesOf(yield* fromChatsDelete([BOB_LID, "status@broadcast"], phoneOfLid))).toEqual([{ chatId: bobChat, deleted: true }])
    }))
})

describe("messaging-history.set → HistoryReceived", () => {
  it.effect("a chat marked unread on the phone counts -1; a batch with nothing in it is no event", () =>
    Effect.gen(function*() {
      const [event] = yield* fromHistorySet({ chats: [{ id: bobWire, markedAsUnread: true, unreadCount: 0 }], contacts: [], messages: [], progress: 40 })
      expect(event).toMatchObject({ _tag: "HistoryReceived", batch: { chats: [{ chatId: bobChat, unreadCount: -1 }], progress: 40, onDemand: false } })
      expect(yield* fromHistorySet({ chats: [], contacts: [], messages: [] })).toEqual([])
    }))

  it.effect("the phone's own message in a group keeps the group as its chat and the account as its author", () =>
    Effect.gen(function*() {
      const [event] = yield* fromHistorySet(
        {
          chats: [],
          contacts: [{ id: bobWire, name: "Bob" }],
          messages: [{ key: { remoteJid: GROUP, fromMe: true, id: "3EB0MINE" }, message: { conversation: "from my phone" }, messageTimestamp: T }]
        },
        { phoneOfLid: mapping({}), me: () => ({ id: `${ALICE}:3@s.whatsapp.net`, lid: "111111111111111:3@lid" }) }
      )
      expect(event).toMatchObject({
        batch: {
          contacts: [{ chatId: bobChat, name: "Bob" }],
          messages: [{ engineMessageId: "3EB0MINE", chatId: GROUP, from: `${ALICE}@c.us`, fromLid: "111111111111111@lid", fromMe: true, text: "from my phone" }]
        }
      })
    }))
})
