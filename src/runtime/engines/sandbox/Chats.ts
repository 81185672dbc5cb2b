import { Array as Arr, Effect } from "effect"
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

export const makeConversations = Effect.sync(() => conversationsOf(new Map()))

/**
 * Each phone's log is appended to in place (every send records twice, and copying a long log
 * at each would cost more the longer the network runs); readers take what they need from it
 * at once, within the same step.
 */
const conversationsOf = (logs: Map<string, Array<LoggedMessage>>) => {
  const of = (phone: string): Effect.Effect<ReadonlyArray<LoggedMessage>> => Effect.sync(() => logs.get(phone) ?? [])
  return {
    /** Runs under the network's lock, as every send does. */
    record: (phone: string, message: LoggedMessage) =>
      Effect.sync(() => {
        const log = logs.get(phone)
        if (log === undefined) logs.set(phone, [message])
        else log.push(message)
      }),
    /** The phone's messages of each chat, oldest first. */
    chatsOf: (phone: string) => Effect.map(of(phone), (messages) => Arr.groupBy(messages, (message) => message.chatId)),
    inChat: (phone: string, chatId: string) => Effect.map(of(phone), (messages) => messages.filter((message) => message.chatId === chatId)),
    forgetChat: (phone: string, chatId: string) =>
      Effect.sync(() => {
        const log = logs.get(phone)
        if (log !== undefined) logs.set(phone, log.filter((message) => message.chatId !== chatId))
      })
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
