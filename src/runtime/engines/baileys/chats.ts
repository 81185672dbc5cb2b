import type { BaileysEventMap, ChatModification, ChatUpdate, WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import { EngineEvent } from "../../Engine.js"
import type { ChatAnchor, ChatModification as Modification, ChatOperations, InboundChatChange } from "../../EngineAccount.js"
import { engineErrorOf } from "./disconnect.js"
import { isGroupJid, isStatusBroadcast, noPhoneLookup, type PhoneOfLid, personIdOf, toApiId, toWireJid } from "./jids.js"
import { appStateErrorOf } from "./labels.js"
import { keyOf, refusal } from "./messageActions.js"

/**
 * The account's chat list through Baileys. Archive, pin, mute, mark unread and delete are
 * app-state patches (`chatModify` → `appPatch`), synced to the account's other devices, which
 * need the app-state keys the phone shares after linking (refused as not ready until then, as
 * stars and labels are). Archiving, marking unread and deleting name the chat's newest message
 * (WhatsApp's `messageRange`). Older messages are asked of the phone (`fetchMessageHistory`, a
 * peer data operation to its own device); they come back as an ON_DEMAND history sync.
 *
 * What the phone does to chats arrives as `chats.update` (from its app-state patches) and
 * `chats.delete`; `chats.upsert` names new chats (a group the account was added to).
 */

export type ChatSocket = Pick<WASocket, "chatModify" | "fetchMessageHistory">

/** `lastMessages` as Baileys takes it: the newest message, or none when the gateway holds none. */
const lastMessagesOf = (chatId: string, newest: ChatAnchor | null) =>
  newest === null ? [] : [{ key: keyOf(chatId, newest.target), messageTimestamp: Math.floor(newest.timestamp.getTime() / 1000) }]

/** The gateway's change as Baileys' `ChatModification`; a mute's end is in ms since the epoch. */
export const modificationOf = (chatId: string, modification: Modification, newest: ChatAnchor | null): ChatModification => {
  switch (modification.kind) {
    case "archive":
      return { archive: modification.archived, lastMessages: lastMessagesOf(chatId, newest) }
    case "pin":
      return { pin: modification.pinned }
    case "mute":
      return { mute: modification.until === null ? null : modification.until.getTime() }
    case "markUnread":
      return { markRead: false, lastMessages: lastMessagesOf(chatId, newest) }
    case "delete":
      return { delete: true, lastMessages: lastMessagesOf(chatId, newest) }
  }
}

export const makeChatOperations = (sock: ChatSocket): ChatOperations => ({
  modify: (chatId, modification, newest) =>
    Effect.tryPromise({
      try: () => sock.chatModify(modificationOf(chatId, modification, newest), toWireJid(chatId)),
      catch: appStateErrorOf("CHAT_MODIFY")
    }),
  requestHistory: (chatId, count, oldest) =>
    Effect.gen(function*() {
      // WhatsApp's request names the oldest message held; with none there is nothing to ask before.
      if (oldest === null) {
        return yield* refusal("NO_HISTORY_ANCHOR", "older history is asked for before a message of the chat; the gateway holds none of this chat yet", "invalid")
      }
      const key = keyOf(chatId, oldest.target)
      yield* Effect.tryPromise({
        try: () => sock.fetchMessageHistory(count, key, oldest.timestamp.getTime()),
        catch: (error) => engineErrorOf("HISTORY_REQUEST", error)
      })
    })
})

/** WhatsApp's "muted forever" (-1) as a moment: the end of the representable ISO years. */
const MUTED_FOREVER = new Date("9999-12-31T23:59:59.000Z")

const numberOf = (value: Numeric | null | undefined): number | null =>
  value == null ? null : typeof value === "number" ? value : value.toNumber()

/** A mute's end (ms since the epoch; -1 forever; 0 or null: not muted). */
export const mutedUntilOf = (raw: Numeric | null | undefined): Date | null => {
  const ms = numberOf(raw)
  if (ms === null || ms === 0) return null
  return ms < 0 ? MUTED_FOREVER : new Date(ms)
}

/** A chat's API id: groups and channels as they are, people by phone when known, else LID. */
export const chatIdOf = (jid: string | null | undefined, alt: string | null | undefined = undefined, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    if (!jid || isStatusBroadcast(jid)) return null
    if (isGroupJid(jid) || jid.endsWith("@newsletter")) return toApiId(jid)
    return yield* personIdOf(jid, alt, phoneOfLid)
  })

type Numeric = number | { toNumber(): number }

/** What Baileys says of a chat (a history `Conversation`, a `ChatUpdate`), as far as the gateway reads it. */
interface ChatFields {
  readonly name?: string | null | undefined
  readonly archived?: boolean | null | undefined
  readonly pinned?: Numeric | null | undefined
  readonly muteEndTime?: Numeric | null | undefined
  readonly unreadCount?: number | null | undefined
  readonly markedAsUnread?: boolean | null | undefined
}

/** What a chat's fields say, field by field (absent stays absent: "not changed"). */
export const chatChangeOf = (chatId: string, chat: ChatFields): InboundChatChange => {
  const unread = chat.markedAsUnread === true ? -1 : chat.unreadCount
  return {
    chatId,
    ...(chat.name == null ? {} : { name: chat.name }),
    ...(chat.archived == null ? {} : { archived: chat.archived }),
    // Baileys gives the pin's timestamp, null when unpinned
    ...(chat.pinned === undefined ? {} : { pinned: numberOf(chat.pinned) !== null && numberOf(chat.pinned) !== 0 }),
    ...(chat.muteEndTime === undefined ? {} : { mutedUntil: mutedUntilOf(chat.muteEndTime) }),
    ...(unread == null ? {} : { unreadCount: unread })
  }
}

/**
 * `chats.update`. Baileys raises one for every message it processes too (an unread increment,
 * `archived: false`, the newest message): those are the runtime's own business, counted from
 * the messages, so an update that carries a message says only its name here. App-state updates
 * carry none: archive, pin, mute, and unread as 0 (read elsewhere) or -1 (marked unread).
 */
export const fromChatsUpdate = (updates: ReadonlyArray<ChatUpdate>, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const changes: Array<InboundChatChange> = []
    for (const update of updates) {
      const chatId = yield* chatIdOf(update.id, undefined, phoneOfLid)
      if (chatId === null) continue
      const fromMessage = update.messages != null || update.conversationTimestamp != null
      const { archived, muteEndTime, name, pinned, unreadCount } = update
      const change = fromMessage
        ? chatChangeOf(chatId, { name })
        : chatChangeOf(chatId, {
          name,
          archived,
          pinned,
          muteEndTime,
          unreadCount: unreadCount === 0 || unreadCount === -1 ? unreadCount : null
        })
      if (Object.keys(change).length > 1) changes.push(change)
    }
    return changes.length === 0 ? [] : [EngineEvent.ChatsChanged({ changes })]
  })

/** `chats.upsert`: new chats with a name (a group the account joined); nothing else is news. */
export const fromChatsUpsert = (chats: BaileysEventMap["chats.upsert"], phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const changes: Array<InboundChatChange> = []
    for (const chat of chats) {
      const chatId = yield* chatIdOf(chat.id, chat.pnJid, phoneOfLid)
      if (chatId !== null && chat.name) changes.push({ chatId, name: chat.name })
    }
    return changes.length === 0 ? [] : [EngineEvent.ChatsChanged({ changes })]
  })

/** `chats.delete`: the chat was cleared and removed on another device. */
export const fromChatsDelete = (ids: BaileysEventMap["chats.delete"], phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const changes: Array<InboundChatChange> = []
    for (const id of ids) {
      const chatId = yield* chatIdOf(id, undefined, phoneOfLid)
      if (chatId !== null) changes.push({ chatId, deleted: true })
    }
    return changes.length === 0 ? [] : [EngineEvent.ChatsChanged({ changes })]
  })
