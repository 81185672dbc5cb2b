import { Context, Effect, Layer, Option } from "effect"
import { MessageRepo } from "../layers/store/MessageRepo.js"
import { SessionRepo } from "../layers/store/SessionRepo.js"
import { Engine } from "../runtime/Engine.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { Conflict, type EngineFailure, type EngineTimeout, messageNotFound, type NotFound } from "./Errors.js"
import { uuidv7 } from "./Ids.js"
import type { MarkReadRequest, Message, MessageFilter, SendResult, SendTextRequest } from "./Message.js"
import type { Page, PageRequest } from "./Pagination.js"
import { acceptsSends } from "./Session.js"

export interface MessagingService {
  /** Stores the message as `pending` and queues it with the session. 2xx means it is stored. */
  readonly sendText: (sessionId: string, request: SendTextRequest) => Effect.Effect<SendResult, NotFound | Conflict>
  /**
   * Sends read receipts for received messages of a chat (the given ones, or every unread one)
   * and marks them `read`.
   */
  readonly markRead: (sessionId: string, request: MarkReadRequest) => Effect.Effect<
    { readonly chatId: string; readonly read: number },
    NotFound | Conflict | EngineFailure | EngineTimeout
  >
  readonly list: (sessionId: string, filter: MessageFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<Message>, NotFound>
  readonly get: (sessionId: string, messageId: string) => Effect.Effect<Message, NotFound>
}

export class Messaging extends Context.Tag("switchboard/Messaging")<Messaging, MessagingService>() {
  static readonly layer = Layer.effect(Messaging, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const sessions = yield* SessionRepo
  const messages = yield* MessageRepo
  const supervisor = yield* SessionSupervisor
  const engine = yield* Engine

  const get = (sessionId: string, messageId: string) =>
    Effect.zipRight(
      sessions.get(sessionId),
      Effect.flatMap(messages.findById(sessionId, messageId), Option.match({
        onNone: () => Effect.fail(messageNotFound(messageId)),
        onSome: Effect.succeed
      }))
    )

  const service: MessagingService = {
    sendText: (sessionId, request) =>
      Effect.gen(function*() {
        const session = yield* sessions.get(sessionId)
        if (!acceptsSends(session.status)) {
          return yield* Effect.fail(
            new Conflict({
              code: "SESSION_NOT_READY",
              message: `session is ${session.status}; messages are accepted while it is ready or disconnected`
            })
          )
        }
        if (request.quotedMessageId !== undefined) yield* get(sessionId, request.quotedMessageId)
        const now = new Date().toISOString()
        const id = uuidv7()
        yield* messages.insert({
          id,
          sessionId,
          chatId: request.chatId,
          from: session.phone === null ? "" : `${session.phone}@c.us`,
          to: request.chatId,
          fromMe: true,
          type: "text",
          text: request.text,
          caption: null,
          status: "pending",
          ack: 0,
          error: null,
          engineMessageId: engine.newMessageId(),
          quotedMessageId: request.quotedMessageId ?? null,
          mentions: request.mentions ?? null,
          batchId: null,
          timestamp: now,
          createdAt: now,
          updatedAt: now
        })
        yield* supervisor.send(sessionId, id)
        return { messageId: id as SendResult["messageId"], chatId: request.chatId, status: "pending" as const, timestamp: now }
      }),
    markRead: (sessionId, { chatId, messageIds }) =>
      Effect.gen(function*() {
        yield* sessions.get(sessionId)
        const wanted = messageIds === undefined ? undefined : new Set(messageIds)
        const unread = (yield* messages.list(sessionId, { chatId, direction: "in", status: "delivered" }, Option.none())).items
          .filter((message) => wanted === undefined || wanted.has(message.id))
        const rows = (yield* Effect.forEach(unread, (message) => messages.findRow(message.id))).flatMap((row) =>
          Option.isSome(row) && row.value.engineMessageId !== null ? [row.value] : []
        )
        if (rows.length === 0) return { chatId, read: 0 }
        yield* supervisor.markRead(sessionId, chatId, rows.map((row) => row.engineMessageId!))
        const at = new Date().toISOString()
        yield* Effect.forEach(rows, (row) => messages.updateStatus(row.id, "read", at), { discard: true })
        return { chatId, read: rows.length }
      }),
    list: (sessionId, filter, page) => Effect.zipRight(sessions.get(sessionId), messages.list(sessionId, filter, page)),
    get
  }
  return service
})
