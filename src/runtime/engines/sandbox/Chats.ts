import { Array as Arr, Effect, HashMap, Option, Ref } from "effect"
import type { HistorySync } from "../../../domain/SessionSettings.js"
import { type EngineError, EngineEvent, type InboundMessage } from "../../Engine.js"
import type { ChatAnchor, ChatOperations, HistoryBatch } from "../../EngineAccount.js"
import { refuse } from "./Directory.js"
import { type Payload, received } from "./Messaging.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * The phone side of the sandbox's chats: each identity's phone keeps its person conversations
 * (whether or not a session is linked to it, as a real phone does), so that linking a session
 * brings its history (per `historySync`) and `requestHistory` answers with older messages. The
 * account's own flags (archived, pinned, muted) have no other device to sync to here; deleting a
 * chat deletes it on the phone too. Kept in memory: a restarted network's phones start empty.
 */

/** One message of a conversation, as one phone keeps it. */
export interface LoggedMessage {
  readonly engineMessageId: string
  /** The chat from this phone's side: the other person. */
  readonly chatId: string
  readonly from: string
  readonly fromLid: string | null
  readonly fromMe: boolean
  readonly payload: Payload
  readonly timestamp: Date
}

/** "recent": what a phone sends a newly linked device by default, the newest of each chat. */
export const RECENT_HISTORY_PER_CHAT = 50

export type Conversations = ReturnType<typeof conversationsOf>

export const makeConversations = Effect.map(Ref.make(HashMap.empty<string, ReadonlyArray<LoggedMessage>>()), (logs) => conversationsOf(logs))

const conversationsOf = (logs: Ref.Ref<HashMap.HashMap<string, ReadonlyArray<LoggedMessage>>>) => {
  const of = (phone: string): Effect.Effect<ReadonlyArray<LoggedMessage>> =>
    Effect.map(Ref.get(logs), (all) => Option.getOrElse(HashMap.get(all, phone), (): ReadonlyArray<LoggedMessage> => []))
  return {
    /** Runs under the network's lock, as every send does. */
    record: (phone: string, message: LoggedMessage) =>
      Ref.update(logs, (all) => HashMap.set(all, phone, [...Option.getOrElse(HashMap.get(all, phone), (): ReadonlyArray<LoggedMessage> => []), message])),
    /** The phone's messages of each chat, oldest first. */
    chatsOf: (phone: string) => Effect.map(of(phone), (messages) => Arr.groupBy(messages, (message) => message.chatId)),
    inChat: (phone: string, chatId: string) => Effect.map(of(phone), (messages) => messages.filter((message) => message.chatId === chatId)),
    forgetChat: (phone: string, chatId: string) =>
      Ref.update(logs, HashMap.modify(phone, (messages) => messages.filter((message) => message.chatId !== chatId)))
  }
}

const inboundOf = (message: LoggedMessage): InboundMessage => ({
  ...received(message, message.payload, message.timestamp).message,
  ...(message.fromMe ? { fromMe: true } : {})
})

const batchOf = (chatId: string, messages: ReadonlyArray<LoggedMessage>, progress: number | null, onDemand: boolean): HistoryBatch => ({
  chats: [{ chatId }],
  messages: messages.map(inboundOf),
  contacts: [],
  progress,
  onDemand
})

/** What came before the anchor (the oldest message the gateway holds); everything without one. */
const olderThan = (messages: ReadonlyArray<LoggedMessage>, oldest: ChatAnchor | null) => {
  if (oldest === null) return messages
  const at = messages.findIndex((message) => message.engineMessageId === oldest.target.engineMessageId)
  return at >= 0 ? messages.slice(0, at) : messages.filter((message) => message.timestamp < oldest.timestamp)
}

const chatNotFound = (chatId: string) => refuse("not_found", "CHAT_NOT_FOUND", `this account has no chat ${chatId}`)

export const chatsOf = (
  switchboard: Switchboard,
  conversations: Conversations,
  /** Fails `not_found` unless the account is in the group. */
  groupMembership: (line: Line, groupId: string) => Effect.Effect<unknown, EngineError>
) => {
  const { emitIfLive, requireReady, serialized } = switchboard

  const hasChat = (line: Line, chatId: string) =>
    chatId.endsWith("@g.us")
      ? Effect.asVoid(groupMembership(line, chatId))
      : Effect.flatMap(conversations.inChat(line.me.phone, chatId), (messages) =>
        messages.length > 0 ? Effect.void : Effect.fail(chatNotFound(chatId)))

  const operations = (line: Line): ChatOperations => ({
    modify: (chatId, modification) =>
      serialized(Effect.gen(function*() {
        yield* requireReady(line)
        yield* hasChat(line, chatId)
        if (modification.kind === "delete") yield* conversations.forgetChat(line.me.phone, chatId)
      })),
    requestHistory: (chatId, count, oldest) =>
      serialized(Effect.gen(function*() {
        yield* requireReady(line)
        yield* hasChat(line, chatId)
        const older = olderThan(yield* conversations.inChat(line.me.phone, chatId), oldest)
        yield* emitIfLive(line, EngineEvent.HistoryReceived({ batch: batchOf(chatId, older.slice(-count), 100, true) }))
      }))
  })

  /** A newly linked session: the phone sends its chats, one batch each, as `historySync` says. */
  const offerHistory = (line: Line, historySync: HistorySync) =>
    serialized(Effect.gen(function*() {
      if (historySync === "off") return
      const chats = Object.entries(yield* conversations.chatsOf(line.me.phone))
      yield* Effect.forEach(chats, ([chatId, messages], i) => {
        const offered = historySync === "full" ? messages : messages.slice(-RECENT_HISTORY_PER_CHAT)
        const progress = Math.round(((i + 1) / chats.length) * 100)
        return emitIfLive(line, EngineEvent.HistoryReceived({ batch: batchOf(chatId, offered, progress, false) }))
      }, { discard: true })
    }))

  return { operations, offerHistory }
}
