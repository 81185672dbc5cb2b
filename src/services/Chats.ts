import { Context, DateTime, Effect, Layer, Option } from "effect"
import type { Chat, ChatListFilter, MuteChatRequest } from "../domain/Chat.js"
import {
  chatNotFound,
  type EngineCallError,
  type EngineTimeout,
  type NotFound,
  type StoreUnavailable,
  ValidationFailed
} from "../domain/Errors.js"
import type { Message } from "../domain/Message.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { recordChatChange, removeChat } from "../runtime/ChatEvents.js"
import type { ChatAnchor, ChatModification } from "../runtime/EngineAccount.js"
import { engineCall } from "../runtime/EngineCall.js"
import { type ChatEdge, type ChatFields, ChatRepo } from "../runtime/ports/store/ChatRepo.js"
import type { Events } from "../runtime/Events.js"
import type { MediaStore } from "../runtime/ports/MediaStore.js"
import { MessageRepo } from "../runtime/ports/store/MessageRepo.js"
import { Store } from "../runtime/ports/store/Store.js"
import { makeSessionCalls } from "./SessionCalls.js"

type Refusal = EngineCallError | EngineTimeout | StoreUnavailable

export interface ChatsService {
  readonly list: (sessionId: string, filter: ChatListFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<Chat>, NotFound | StoreUnavailable>
  readonly get: (sessionId: string, chatId: string) => Effect.Effect<Chat, NotFound | StoreUnavailable>
  readonly archive: (sessionId: string, chatId: string, archived: boolean) => Effect.Effect<Chat, Refusal>
  readonly pin: (sessionId: string, chatId: string, pinned: boolean) => Effect.Effect<Chat, Refusal>
  /** 400 VALIDATION_FAILED for a moment already past. */
  readonly mute: (sessionId: string, chatId: string, request: MuteChatRequest) => Effect.Effect<Chat, Refusal | ValidationFailed>
  /** Marks the chat unread (`unreadCount` -1) unless it has unread messages already. */
  readonly markUnread: (sessionId: string, chatId: string) => Effect.Effect<Chat, Refusal>
  /** Clears the chat and removes it from the account's list, on the phone too. */
  readonly remove: (sessionId: string, chatId: string) => Effect.Effect<void, Refusal>
  readonly messages: (sessionId: string, chatId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Message>, NotFound | StoreUnavailable>
  /** Asks the phone for `count` messages older than the oldest held; they arrive later as history. */
  readonly requestHistory: (sessionId: string, chatId: string, count: number) => Effect.Effect<
    { readonly chatId: string; readonly count: number; readonly requested: boolean },
    Refusal>
}

export class Chats extends Context.Tag("switchboard/Chats")<Chats, ChatsService>() {
  static readonly layer = Layer.effect(Chats, Effect.suspend(() => make))
}

const anchorOf = (edge: ChatEdge): ChatAnchor => ({
  target: { engineMessageId: edge.engineMessageId, fromMe: edge.fromMe, from: edge.from },
  timestamp: new Date(edge.timestamp)
})

const make = Effect.gen(function*() {
  const chats = yield* ChatRepo
  const messages = yield* MessageRepo
  const { transactionally } = yield* Store
  const { call, exists } = yield* makeSessionCalls
  // What the runtime's chat writes need (the repositories, the event outbox, the media store).
  const runtime = yield* Effect.context<ChatRepo | Events | MediaStore | Store>()
  const inTransaction = <A, E>(write: Effect.Effect<A, E, ChatRepo | Events | MediaStore | Store>) =>
    Effect.provide(transactionally(write), runtime)

  const existing = (sessionId: string, chatId: string) =>
    Effect.zipRight(
      exists(sessionId),
      Effect.flatMap(chats.find(sessionId, chatId), Option.match({ onNone: () => Effect.fail(chatNotFound(chatId)), onSome: Effect.succeed }))
    )

  /**
   * The engine first (with the chat's newest message as WhatsApp's patches want it), then the
   * Store and the `chat.update` announcing it, in one transaction.
   */
  const change = (sessionId: string, chatId: string, modification: ChatModification, fields: ChatFields) =>
    Effect.gen(function*() {
      yield* existing(sessionId, chatId)
      const { newest } = yield* chats.edges(sessionId, chatId)
      yield* call(sessionId, engineCall("ChatsModify", { chatId, modification, newest: Option.getOrNull(Option.map(newest, anchorOf)) }))
      yield* inTransaction(recordChatChange(sessionId, chatId, fields))
      return yield* existing(sessionId, chatId)
    })

  const service: ChatsService = {
    list: Effect.fn("Chats.list")((sessionId, filter, page) => Effect.zipRight(exists(sessionId), chats.list(sessionId, filter, page))),
    get: Effect.fn("Chats.get")(existing),
    archive: Effect.fn("Chats.archive")((sessionId, chatId, archived) =>
      change(sessionId, chatId, { kind: "archive", archived }, { archived })),
    pin: Effect.fn("Chats.pin")((sessionId, chatId, pinned) => change(sessionId, chatId, { kind: "pin", pinned }, { pinned })),
    mute: Effect.fn("Chats.mute")(function*(sessionId, chatId, request) {
      const now = yield* DateTime.nowAsDate
      const until = "hours" in request
        ? new Date(now.getTime() + request.hours * 3_600_000)
        : request.until === null
        ? null
        : new Date(request.until)
      // A moment already past would be a mute that is over before it starts: the client meant something else.
      if (until !== null && until.getTime() <= now.getTime()) {
        return yield* new ValidationFailed({ code: "VALIDATION_FAILED", message: "until must be in the future; null unmutes" })
      }
      return yield* change(sessionId, chatId, { kind: "mute", until }, { mutedUntil: until === null ? null : until.toISOString() })
    }),
    markUnread: Effect.fn("Chats.markUnread")(function*(sessionId, chatId) {
      const chat = yield* existing(sessionId, chatId)
      return yield* change(sessionId, chatId, { kind: "markUnread" }, chat.unreadCount === 0 ? { unreadCount: -1 } : {})
    }),
    remove: Effect.fn("Chats.remove")(function*(sessionId, chatId) {
      yield* existing(sessionId, chatId)
      const { newest } = yield* chats.edges(sessionId, chatId)
      yield* call(sessionId, engineCall("ChatsModify", { chatId, modification: { kind: "delete" }, newest: Option.getOrNull(Option.map(newest, anchorOf)) }))
      yield* inTransaction(removeChat(sessionId, chatId))
    }),
    messages: Effect.fn("Chats.messages")((sessionId, chatId, page) =>
      Effect.zipRight(existing(sessionId, chatId), messages.list(sessionId, { chatId }, page))),
    requestHistory: Effect.fn("Chats.requestHistory")(function*(sessionId, chatId, count) {
      yield* existing(sessionId, chatId)
      const { oldest } = yield* chats.edges(sessionId, chatId)
      yield* call(sessionId, engineCall("ChatsRequestHistory", { chatId, count, oldest: Option.getOrNull(Option.map(oldest, anchorOf)) }))
      return { chatId, count, requested: true }
    })
  }
  return service
})
