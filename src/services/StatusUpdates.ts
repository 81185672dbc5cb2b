import { Context, DateTime, Effect, Layer, Option } from "effect"
import { STATUS_CHAT_ID } from "../domain/Chat.js"
import {
  Conflict,
  type EngineCallError,
  type EngineTimeout,
  Forbidden,
  NotFound,
  type PayloadTooLarge,
  type RateLimited,
  type ServiceUnavailable,
  type StoreUnavailable,
  type UnsupportedMediaType,
  type ValidationFailed
} from "../domain/Errors.js"
import type { MediaSource, Message, SendResult } from "../domain/Message.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { STATUS_LIFETIME_MS, type TextStatusRequest } from "../domain/Status.js"
import { ContactRepo } from "../runtime/ports/store/ContactRepo.js"
import { MessageRepo } from "../runtime/ports/store/MessageRepo.js"
import { MessageActions } from "./MessageActions.js"
import { Messaging } from "./Messaging.js"
import { makeSessionCalls } from "./SessionCalls.js"

/** An image or video status as the HTTP layer read it (JSON or multipart). */
export interface MediaStatusInput {
  readonly kind: "image" | "video"
  readonly source: MediaSource
  readonly caption?: string | undefined
  readonly contacts?: ReadonlyArray<string> | undefined
}

type SendError = NotFound | Conflict | RateLimited | ValidationFailed | PayloadTooLarge | UnsupportedMediaType | ServiceUnavailable | StoreUnavailable

/**
 * Status updates (stories): sends to `status@broadcast` shown to the account's contacts for 24
 * hours. Posting is a send like any other (stored, then sent by the session's outbound lane);
 * the feed is the Store's messages of that chat, own ones and the contacts'.
 */
export interface StatusUpdatesService {
  readonly postText: (sessionId: string, request: TextStatusRequest) => Effect.Effect<SendResult, SendError>
  readonly postMedia: (sessionId: string, input: MediaStatusInput) => Effect.Effect<SendResult, SendError>
  /** The status updates of the last 24 hours, newest first. */
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Message>, NotFound | StoreUnavailable>
  /** Takes an own status update back (for everyone who could see it). */
  readonly remove: (sessionId: string, messageId: string) => Effect.Effect<void, NotFound | Forbidden | Conflict | EngineCallError | EngineTimeout | StoreUnavailable>
}

export class StatusUpdates extends Context.Tag("switchboard/StatusUpdates")<StatusUpdates, StatusUpdatesService>() {
  static readonly layer = Layer.effect(StatusUpdates, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const messaging = yield* Messaging
  const actions = yield* MessageActions
  const messages = yield* MessageRepo
  const contacts = yield* ContactRepo
  const { exists } = yield* makeSessionCalls

  /**
   * Those named, else every contact the session knows, less those the account blocked (WhatsApp
   * shows them none of its status updates); nobody left to show it to is a refusal, not a silent no-op.
   */
  const audienceOf = (sessionId: string, named: ReadonlyArray<string> | undefined) =>
    Effect.gen(function*() {
      const wanted = named !== undefined ? [...new Set(named)] : (yield* contacts.list(sessionId, Option.none())).items.map((contact) => contact.id)
      const blocked = new Set((yield* contacts.blocklist(sessionId, Option.none())).items.flatMap((contact) => [contact.chatId, contact.lid]))
      const audience = wanted.filter((id) => !blocked.has(id))
      if (audience.length === 0) {
        return yield* new Conflict({
          code: "NO_STATUS_AUDIENCE",
          message: named !== undefined
            ? "the account blocked every contact named in contacts; a status update would reach nobody"
            : "the session knows no contacts yet (but blocked ones) to show a status update to; name them in contacts"
        })
      }
      return audience
    })

  const service: StatusUpdatesService = {
    postText: Effect.fn("StatusUpdates.postText")(function*(sessionId, request) {
      yield* exists(sessionId)
      const audience = yield* audienceOf(sessionId, request.contacts)
      const style = { backgroundColor: request.backgroundColor ?? null, font: request.font ?? null }
      return yield* messaging.sendStatus(sessionId, { audience, content: { type: "text", text: request.text, style } })
    }),
    postMedia: Effect.fn("StatusUpdates.postMedia")(function*(sessionId, input) {
      yield* exists(sessionId)
      const audience = yield* audienceOf(sessionId, input.contacts)
      const media = { chatId: STATUS_CHAT_ID, kind: input.kind, source: input.source, caption: input.caption }
      return yield* messaging.sendStatus(sessionId, { audience, content: { type: "media", input: media } })
    }),
    list: Effect.fn("StatusUpdates.list")(function*(sessionId, page) {
      yield* exists(sessionId)
      const since = DateTime.formatIso(DateTime.subtract(yield* DateTime.now, { millis: STATUS_LIFETIME_MS }))
      return yield* messages.list(sessionId, { chatId: STATUS_CHAT_ID, since }, page)
    }),
    remove: Effect.fn("StatusUpdates.remove")(function*(sessionId, messageId) {
      yield* exists(sessionId)
      const row = Option.filter(yield* messages.findRow(messageId), (row) => row.sessionId === sessionId && row.chatId === STATUS_CHAT_ID)
      if (Option.isNone(row)) return yield* new NotFound({ code: "STATUS_NOT_FOUND", message: `no status update ${messageId} in this session` })
      if (!row.value.fromMe) {
        return yield* new Forbidden({ code: "NOT_OWN_STATUS", message: "only the session's own status updates can be deleted" })
      }
      yield* actions.remove(sessionId, messageId, "everyone")
    })
  }
  return service
})
