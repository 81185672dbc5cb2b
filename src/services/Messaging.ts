import { refuseIfBlocked } from "./blockedRecipient.js"
import { existingSession } from "./sessionLookup.js"
import type { StoreUnavailable } from "../domain/Errors.js"
import { Clock, Context, DateTime, Effect, Layer, Option, type Stream } from "effect"
import { mediaKey, MediaStore, type MediaStoreError } from "../runtime/ports/MediaStore.js"
import { type BatchRecord, BatchRepo } from "../runtime/ports/store/BatchRepo.js"
import type { MediaRecord, MessageRow, SendOptions } from "../runtime/ports/store/MessageRepo.js"
import { STATUS_CHAT_ID } from "../domain/Chat.js"
import { outboundRow as newOutboundRow } from "../runtime/OutboundRow.js"
import {
  contactContent,
  locationContent,
  type OutboundAddressing,
  type OutboundContentFields,
  pollContent,
  sendOptionsOf,
  textContent
} from "./outboundContent.js"
import { MessageRepo } from "../runtime/ports/store/MessageRepo.js"
import type { ChatRepo } from "../runtime/ports/store/ChatRepo.js"
import { recordChatChange } from "../runtime/ChatEvents.js"
import { settingsOrDefault } from "../domain/SessionSettings.js"
import { Store } from "../runtime/ports/store/Store.js"
import { GroupCommit } from "../runtime/ports/store/GroupCommit.js"
import { SessionRepo, type SessionRow } from "../runtime/ports/store/SessionRepo.js"
import { Engine } from "../runtime/Engine.js"
import { engineCall } from "../runtime/EngineCall.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import {
  Conflict,
  type EngineCallError,
  type EngineTimeout,
  messageNotFound,
  NotFound,
  type PayloadTooLarge,
  type RateLimited,
  ServiceUnavailable,
  type UnsupportedMediaType,
  type ValidationFailed
} from "../domain/Errors.js"
import { Events } from "../runtime/Events.js"
import { makeEvent } from "../domain/makeEvent.js"
import { uuidv7 } from "../domain/uuidv7.js"
import { MediaIntake } from "./MediaIntake.js"
import type {
  Batch,
  ForwardRequest,
  MarkReadRequest,
  Message,
  MessageFilter,
  MessageStatus,
  ReactRequest,
  SendBulkRequest,
  SendMediaInput,
  SendContactRequest,
  SendLocationRequest,
  SendPollRequest,
  SendResult,
  SendTextRequest
} from "../domain/Message.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { acceptsSends } from "../domain/Session.js"
import { ContactRepo } from "../runtime/ports/store/ContactRepo.js"
import { OutboundBacklog } from "./outboundBacklog.js"

export interface MessagingService {
  /** Stores the message as `pending` and queues it with the session. 2xx means it is stored. */
  readonly sendText: (sessionId: string, request: SendTextRequest) => Effect.Effect<SendResult, NotFound | Conflict | RateLimited | StoreUnavailable>
  readonly sendLocation: (sessionId: string, request: SendLocationRequest) => Effect.Effect<SendResult, NotFound | Conflict | RateLimited | StoreUnavailable>
  /** The vCards are built from the fields given. */
  readonly sendContact: (sessionId: string, request: SendContactRequest) => Effect.Effect<SendResult, NotFound | Conflict | RateLimited | StoreUnavailable>
  readonly sendPoll: (sessionId: string, request: SendPollRequest) => Effect.Effect<SendResult, NotFound | Conflict | RateLimited | StoreUnavailable>
  /**
   * Takes in the media (fetched, size-capped, its type told from the bytes), keeps it in the
   * media store, then stores and queues the message like a text.
   */
  readonly sendMedia: (sessionId: string, input: SendMediaInput) => Effect.Effect<
    SendResult,
    NotFound | Conflict | RateLimited | ValidationFailed | PayloadTooLarge | UnsupportedMediaType | ServiceUnavailable | StoreUnavailable>
  /**
   * A status update (to `status@broadcast`): a text or a media, accepted like any send, its
   * audience and look kept in the row's send options for the lane (and any resend) to use.
   */
  readonly sendStatus: (sessionId: string, update: StatusSend) => Effect.Effect<
    SendResult,
    NotFound | Conflict | RateLimited | ValidationFailed | PayloadTooLarge | UnsupportedMediaType | ServiceUnavailable | StoreUnavailable>
  /**
   * Sends a message of the session again (to any chat), marked forwarded; its media is copied
   * from the media store, not fetched again.
   */
  readonly forward: (sessionId: string, messageId: string, request: ForwardRequest) => Effect.Effect<
    SendResult,
    NotFound | Conflict | RateLimited | ServiceUnavailable | StoreUnavailable>
  /**
   * The bytes of a message's media, sent or received, with what they are: streamed from the
   * media store as they are read (a failure mid-stream ends the stream with the error).
   */
  readonly getMedia: (sessionId: string, messageId: string) => Effect.Effect<
    {
      readonly size: number
      readonly stream: Stream.Stream<Uint8Array, MediaStoreError>
      readonly mimetype: string
      readonly filename: string | null
    },
    NotFound | ServiceUnavailable | StoreUnavailable>
  /** Sets this session's reaction on a message of the chat; `emoji` "" takes it back. */
  readonly react: (sessionId: string, request: ReactRequest) => Effect.Effect<
    { readonly messageId: string; readonly chatId: string; readonly emoji: string },
    EngineCallError | EngineTimeout | StoreUnavailable>
  /**
   * Sends read receipts for received messages of a chat (the given ones, or every unread one)
   * and marks them `read`.
   */
  readonly markRead: (sessionId: string, request: MarkReadRequest) => Effect.Effect<
    { readonly chatId: string; readonly read: number },
    EngineCallError | EngineTimeout | StoreUnavailable>
  /** Stores every message (all or none) as one batch, queued with the session's pacing. */
  readonly sendBulk: (sessionId: string, request: SendBulkRequest) => Effect.Effect<
    { readonly batchId: string; readonly total: number },
    NotFound | Conflict | RateLimited | ValidationFailed | PayloadTooLarge | UnsupportedMediaType | ServiceUnavailable | StoreUnavailable>
  readonly getBatch: (sessionId: string, batchId: string) => Effect.Effect<Batch, NotFound | StoreUnavailable>
  /** Stops the batch's messages that have not gone out; they end `failed` with `CANCELLED`. */
  readonly cancelBatch: (sessionId: string, batchId: string) => Effect.Effect<Batch, NotFound | StoreUnavailable>
  readonly list: (sessionId: string, filter: MessageFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<Message>, NotFound | StoreUnavailable>
  readonly get: (sessionId: string, messageId: string) => Effect.Effect<Message, NotFound | StoreUnavailable>
}

/** What a status update is made of; `audience` is never empty (WhatsApp encrypts it to each of them). */
export interface StatusSend {
  readonly audience: ReadonlyArray<string>
  readonly content:
    | { readonly type: "text"; readonly text: string; readonly style: NonNullable<SendOptions["statusStyle"]> }
    | { readonly type: "media"; readonly input: SendMediaInput }
}

export class Messaging extends Context.Tag("switchboard/Messaging")<Messaging, MessagingService>() {
  static readonly layer = Layer.effect(Messaging, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const sessions = yield* SessionRepo
  const messages = yield* MessageRepo
  const supervisor = yield* SessionSupervisor
  const engine = yield* Engine
  const batches = yield* BatchRepo
  const events = yield* Events
  const intake = yield* MediaIntake
  const mediaStore = yield* MediaStore
  const contacts = yield* ContactRepo
  const backlog = yield* OutboundBacklog
  const transactionally = (yield* Store).transactionally
  const groupCommit = yield* GroupCommit
  // Reading a chat sets its unread count (and announces it) with the runtime's chat writes.
  const chatWrites = yield* Effect.context<ChatRepo | Events>()

  const mediaUnavailable = (error: { readonly message: string }) =>
    Effect.zipRight(
      Effect.logError("media store failed", error.message),
      Effect.fail(new ServiceUnavailable({ code: "MEDIA_STORE_UNAVAILABLE", message: "the media store cannot be reached; try again" }))
    )

  /** The session, if it accepts sends now (see `acceptsSends`: they wait for the session to be ready). */
  const sendingSession = (sessionId: string) =>
    Effect.flatMap(existingSession(sessions, sessionId), (session) =>
      acceptsSends(session.status, session.phone !== null)
        ? Effect.succeed(session)
        : Effect.fail(
          new Conflict({
            code: "SESSION_NOT_READY",
            message: `session is ${session.status}; messages are accepted while it is ready, or linked and reconnecting`
          })
        ))

  /**
   * The session accepts sends, its outbound backlog has room for one more (429
   * SESSION_BACKLOG_FULL otherwise), and the account has not blocked the recipient (WhatsApp
   * would refuse the send).
   */
  const sendingTo = (sessionId: string, chatId: string) =>
    Effect.tap(sendingSession(sessionId), () =>
      Effect.zipRight(backlog.admit(sessionId), refuseIfBlocked(contacts, sessionId, chatId)))

  /** A message as accepted: `pending`, with the network id it will keep through any resend. */
  const outboundRow = (
    session: SessionRow,
    request: OutboundAddressing,
    content: OutboundContentFields,
    batchId: string | null,
    millis: number
  ): MessageRow =>
    newOutboundRow({
      session,
      chatId: request.chatId,
      content,
      engineMessageId: engine.newMessageId(),
      sendOptions: sendOptionsOf(request),
      quotedMessageId: request.quotedMessageId,
      mentions: request.mentions,
      batchId,
      millis
    })

  const findBatch = (sessionId: string, batchId: string) =>
    Effect.zipRight(
      existingSession(sessions, sessionId),
      Effect.flatMap(batches.find(sessionId, batchId), Option.match({
        onNone: () => Effect.fail(new NotFound({ code: "BATCH_NOT_FOUND", message: `Batch ${batchId} does not exist` })),
        onSome: (batch) => Effect.succeed(toBatch(batch))
      }))
    )

  const get = Effect.fn("Messaging.get")((sessionId: string, messageId: string) =>
    Effect.zipRight(
      existingSession(sessions, sessionId),
      Effect.flatMap(messages.findById(sessionId, messageId), Option.match({
        onNone: () => Effect.fail(messageNotFound(messageId)),
        onSome: Effect.succeed
      }))
    ))

  /** The media of a send, taken in (fetched, checked, typed) and described for its row. */
  const takeInMedia = (input: SendMediaInput) =>
    Effect.map(intake.accept(input.kind, input.source), (media) => ({
      content: {
        type: input.kind,
        text: null,
        // A sticker has no caption: WhatsApp shows none.
        caption: input.kind === "sticker" ? null : input.caption ?? null,
        media: {
          mimetype: media.mimetype,
          filename: input.filename ?? media.filename,
          size: media.data.length,
          ptt: input.kind === "audio" && input.ptt === true,
          stored: true
        }
      } satisfies OutboundContentFields,
      data: media.data
    }))

  /** The bytes go to the media store before their rows go to the Store: a stored message always finds its media. */
  const keepMedia = (media: ReadonlyArray<{ readonly row: MessageRow; readonly data: Uint8Array }>) =>
    Effect.forEach(media, ({ data, row }) => mediaStore.put(mediaKey(row.sessionId, row.id), data), { discard: true, concurrency: 4 }).pipe(
      Effect.catchAll(mediaUnavailable)
    )

  /** Stored as `pending`, then handed to the session's outbound lane. */
  /**
   * Stored, then queued, as one step a caller who goes away cannot cut in two: a client that
   * hangs up while its write waits for the batch's commit would otherwise leave the message
   * stored `pending` and never queued (seen under load on Postgres) until the next restart.
   */
  const accept = (row: MessageRow) =>
    Effect.uninterruptible(Effect.gen(function*() {
      // Committed (with the writes that came with it) before the caller hears 201.
      yield* groupCommit.writeMerged(messages.insertAll, row)
      yield* supervisor.send(row.sessionId, row.id, row)
      return { messageId: row.id as SendResult["messageId"], chatId: row.chatId, status: "pending" as const, timestamp: row.createdAt }
    }))

  /** A send whose content needs no intake: checked, stored `pending`, queued. */
  const sendContent = (sessionId: string, request: OutboundAddressing, content: OutboundContentFields) =>
    Effect.gen(function*() {
      const session = yield* sendingTo(sessionId, request.chatId)
      if (request.quotedMessageId !== undefined) yield* get(sessionId, request.quotedMessageId)
      return yield* accept(outboundRow(session, request, content, null, yield* Clock.currentTimeMillis))
    })

  /** A media send: taken in, kept in the media store, then stored and queued. */
  const sendMediaAs = (sessionId: string, input: SendMediaInput, addressing: OutboundAddressing) =>
    Effect.gen(function*() {
      const session = yield* sendingTo(sessionId, addressing.chatId)
      if (addressing.quotedMessageId !== undefined) yield* get(sessionId, addressing.quotedMessageId)
      const { content, data } = yield* takeInMedia(input)
      const row = outboundRow(session, addressing, content, null, yield* Clock.currentTimeMillis)
      yield* keepMedia([{ row, data }])
      return yield* accept(row)
    })

  /** What a forward of `original` carries: the same content, marked forwarded (a poll gets its own secret). */
  const forwardedContent = (original: MessageRow) =>
    Effect.gen(function*() {
      const refuse = (message: string) => Effect.fail(new Conflict({ code: "FORWARD_NOT_ALLOWED", message }))
      if (original.revoked) return yield* refuse("a deleted message cannot be forwarded")
      if (original.type === "unknown" || original.type === "reaction") return yield* refuse(`a message of type ${original.type} cannot be forwarded`)
      const { media } = original
      const data = media === null ? null : yield* Effect.flatMap(
        media.stored ? mediaStore.read(mediaKey(original.sessionId, original.id)).pipe(Effect.catchAll(mediaUnavailable)) : Effect.succeedNone,
        Option.match({
          onNone: () => refuse("the media of this message was not kept, so it cannot be forwarded"),
          onSome: Effect.succeed
        })
      )
      const poll = original.poll === null ? null : (pollContent(original.poll).extras?.poll ?? null)
      const content: OutboundContentFields = {
        type: original.type,
        text: original.text,
        caption: original.caption,
        media,
        extras: { location: original.location, contacts: original.contacts, poll, linkPreview: original.linkPreview, forwarded: true }
      }
      return { content, data }
    })

  const service: MessagingService = {
    // The sends are untraced, the hot path of the API (issue 19): a span is ~30 Effect
    // operations and a copy of the context per call, and no tracer is exported.
    sendText: (sessionId, request) => sendContent(sessionId, request, textContent(request.text)),
    sendLocation: (sessionId, request) => sendContent(sessionId, request, locationContent(request)),
    sendContact: (sessionId, request) => sendContent(sessionId, request, contactContent(request)),
    sendPoll: (sessionId, request) => sendContent(sessionId, request, pollContent(request)),
    sendMedia: (sessionId, input) => sendMediaAs(sessionId, input, input),
    sendStatus: Effect.fn("Messaging.sendStatus")((sessionId, { audience, content }) =>
      content.type === "text"
        ? sendContent(sessionId, { chatId: STATUS_CHAT_ID, statusAudience: audience, statusStyle: content.style }, textContent(content.text))
        : sendMediaAs(sessionId, { ...content.input, chatId: STATUS_CHAT_ID }, { chatId: STATUS_CHAT_ID, statusAudience: audience })),
    forward: Effect.fn("Messaging.forward")(function*(sessionId, messageId, request) {
      const session = yield* sendingTo(sessionId, request.chatId)
      const original = Option.filter(yield* messages.findRow(messageId), (row) => row.sessionId === sessionId)
      if (Option.isNone(original)) return yield* messageNotFound(messageId)
      const { content, data } = yield* forwardedContent(original.value)
      const row = outboundRow(session, request, content, null, yield* Clock.currentTimeMillis)
      if (data !== null) yield* keepMedia([{ row, data }])
      return yield* accept(row)
    }),
    getMedia: Effect.fn("Messaging.getMedia")(function*(sessionId, messageId) {
      yield* existingSession(sessions, sessionId)
      const row = Option.filter(yield* messages.findRow(messageId), (row) => row.sessionId === sessionId)
      if (Option.isNone(row)) return yield* messageNotFound(messageId)
      const media = row.value.media
      if (media === null || !media.stored) return yield* mediaNotFound(messageId, media)
      const found = yield* mediaStore.stream(mediaKey(sessionId, messageId)).pipe(Effect.catchAll(mediaUnavailable))
      if (Option.isNone(found)) return yield* mediaNotFound(messageId, media)
      return { size: found.value.size, stream: found.value.stream, mimetype: media.mimetype, filename: media.filename }
    }),
    react: Effect.fn("Messaging.react")(function*(sessionId, { chatId, emoji, messageId }) {
      const session = yield* existingSession(sessions, sessionId)
      yield* refuseIfBlocked(contacts, sessionId, chatId)
      const target = Option.filter(
        yield* messages.findRow(messageId),
        (row) => row.sessionId === sessionId && row.chatId === chatId && row.engineMessageId !== null
      )
      if (Option.isNone(target)) {
        return yield* new NotFound({ code: "MESSAGE_NOT_FOUND", message: `Message ${messageId} does not exist in chat ${chatId}` })
      }
      const { engineMessageId, from, fromMe } = target.value
      yield* supervisor.useConnection(
        sessionId,
        engineCall("React", { chatId, emoji, target: { engineMessageId: engineMessageId!, fromMe, from } })
      )
      const me = session.phone === null ? "" : `${session.phone}@c.us`
      yield* transactionally(Effect.gen(function*() {
        const at = yield* DateTime.nowAsDate
        if (!(yield* messages.setReaction(messageId, me, emoji, at.toISOString()))) return
        yield* events.publish(makeEvent("message.reaction", sessionId, { messageId, chatId, emoji, from: me }, at))
      }))
      return { messageId, chatId, emoji }
    }),
    sendBulk: Effect.fn("Messaging.sendBulk")(function*(sessionId, request) {
      const session = yield* sendingSession(sessionId)
      // A batch is let into the backlog whole or not at all.
      yield* backlog.admitBatch(sessionId, request.messages.length)
      // One blocked recipient refuses the whole batch, like any other invalid item: nothing is stored.
      yield* Effect.forEach(request.messages, (item, index) => refuseIfBlocked(contacts, sessionId, item.chatId, { index }), {
        discard: true
      })
      const batchId = uuidv7(yield* Clock.currentTimeMillis)
      // Every item's media is taken in before anything is stored: a batch is accepted whole or not at all.
      const items = yield* Effect.forEach(
        request.messages,
        (item): Effect.Effect<{ readonly content: OutboundContentFields; readonly data: Uint8Array | null }, MediaRefusal> => {
          switch (item.type) {
            case "text":
              return Effect.succeed({ content: textContent(item.text), data: null })
            case "location":
              return Effect.succeed({ content: locationContent(item), data: null })
            case "contact":
              return Effect.succeed({ content: contactContent(item), data: null })
            case "poll":
              return Effect.succeed({ content: pollContent(item), data: null })
            default:
              return takeInMedia({ ...item, kind: item.type, source: item.media })
          }
        },
        // URL fetches wait on the network: a few at once. Anything else is CPU work, done in one go.
        { concurrency: request.messages.some((item) => "media" in item && "url" in item.media) ? 4 : 1 }
      )
      const acceptedAt = yield* Clock.currentTimeMillis
      const rows = items.map(({ content }, i) => outboundRow(session, request.messages[i]!, content, batchId, acceptedAt))
      yield* keepMedia(rows.flatMap((row, i) => {
        const data = items[i]!.data
        return data === null ? [] : [{ row, data }]
      }))
      // As `accept`: stored and queued together, whatever the caller does meanwhile.
      yield* Effect.uninterruptible(Effect.zipRight(
        batches.insert({ id: batchId, sessionId, createdAt: rows[0]!.createdAt }, rows),
        Effect.forEach(rows, (row) => supervisor.send(sessionId, row.id, row), { discard: true })
      ))
      return { batchId, total: rows.length }
    }),
    getBatch: Effect.fn("Messaging.getBatch")((sessionId, batchId) => findBatch(sessionId, batchId)),
    cancelBatch: Effect.fn("Messaging.cancelBatch")(function*(sessionId, batchId) {
      yield* findBatch(sessionId, batchId)
      yield* transactionally(Effect.gen(function*() {
        const at = yield* DateTime.nowAsDate
        const stopped = yield* batches.cancel(batchId, at.toISOString())
        yield* Effect.forEach(stopped, (failed) => events.publish(makeEvent("message.failed", sessionId, failed, at)), { discard: true })
      }))
      return yield* findBatch(sessionId, batchId)
    }),
    markRead: Effect.fn("Messaging.markRead")(function*(sessionId, { chatId, messageIds }) {
      const session = yield* existingSession(sessions, sessionId)
      const wanted = messageIds === undefined ? undefined : new Set(messageIds)
      const unread = (yield* messages.list(sessionId, { chatId, direction: "in", status: "delivered" }, Option.none())).items
      const reading = unread.filter((message) => wanted === undefined || wanted.has(message.id))
      const rows = (yield* Effect.forEach(reading, (message) => messages.findRow(message.id))).flatMap((row) =>
        Option.isSome(row) && row.value.engineMessageId !== null ? [row.value] : []
      )
      // With read receipts off (the session's settings) the chat is marked read here only: no blue ticks.
      if (rows.length > 0 && settingsOrDefault(session.settings).readReceipts) {
        const engineMessageIds = rows.map((row) => row.engineMessageId!)
        yield* supervisor.useConnection(sessionId, engineCall("MarkRead", { chatId, engineMessageIds }))
      }
      const at = DateTime.formatIso(yield* DateTime.now)
      yield* transactionally(Effect.gen(function*() {
        yield* Effect.forEach(rows, (row) => messages.updateStatus(row.id, "read", at), { discard: true })
        yield* Effect.provide(recordChatChange(sessionId, chatId, { unreadCount: unread.length - rows.length }), chatWrites)
      }))
      return { chatId, read: rows.length }
    }),
    list: Effect.fn("Messaging.list")((sessionId, filter, page) => Effect.zipRight(existingSession(sessions, sessionId), messages.list(sessionId, filter, page))),
    get
  }
  return service
})

/** Why media was not taken in. */
type MediaRefusal = ValidationFailed | PayloadTooLarge | UnsupportedMediaType


const mediaNotFound = (messageId: string, media: MediaRecord | null) =>
  new NotFound({
    code: "MEDIA_NOT_FOUND",
    message: media === null
      ? `Message ${messageId} has no media`
      : `The media of message ${messageId} was not kept (INCOMING_MEDIA=skip, or its download failed)`
  })

const wentOut: ReadonlySet<MessageStatus> = new Set(["sent", "delivered", "read", "played"])

/** Progress is derived from the messages themselves: nothing to keep in step. */
const toBatch = (batch: BatchRecord): Batch => {
  const count = (match: (status: MessageStatus) => boolean) => batch.items.filter((item) => match(item.status)).length
  const sent = count((status) => wentOut.has(status))
  const failed = count((status) => status === "failed")
  const pending = count((status) => status === "pending")
  return {
    batchId: batch.id,
    status: batch.cancelledAt !== null ? "cancelled" : pending === batch.total ? "queued" : pending > 0 ? "running" : "completed",
    total: batch.total,
    sent,
    failed,
    pending,
    items: batch.items
  }
}
