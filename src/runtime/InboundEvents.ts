import { Clock, DateTime, Effect, Option } from "effect"
import type { StoreUnavailable } from "../domain/Errors.js"
import { mediaKey, MediaStore } from "./ports/MediaStore.js"
import { type MediaRecord, type MessageExtras, type MessageRow, noExtras, type StatusTransition } from "./ports/store/MessageRepo.js"
import { MessageRepo } from "./ports/store/MessageRepo.js"
import { Store, type Transactionally } from "./ports/store/Store.js"
import { SessionRepo, type SessionRow } from "./ports/store/SessionRepo.js"
import { ContactRepo } from "./ports/store/ContactRepo.js"
import { Events, type EventsService } from "./Events.js"
import { makeEvent } from "../domain/makeEvent.js"
import { uuidv7 } from "../domain/uuidv7.js"
import type { LastError, SessionStatus } from "../domain/Session.js"
import { applyEdit, applyPin, applyPollVote, applyPresence, applyRevoke } from "./InboundChanges.js"
import { applyGroupChange, applyLabelChange, recordContacts } from "./DirectoryEvents.js"
import { applyChatChanges, importHistory } from "./ChatEvents.js"
import { applyContactChanges, applyJoinRequest } from "./ContactEvents.js"
import { applyCall } from "./CallEvents.js"
import { STATUS_CHAT_ID } from "../domain/Chat.js"
import { type SessionSettings, settingsOrDefault } from "../domain/SessionSettings.js"
import type { EngineError, EngineEvent, InboundMedia, InboundMessage, InboundReaction } from "./Engine.js"
import type { Message } from "../domain/Message.js"

/** What happens to the media of received messages (`INCOMING_MEDIA`, `MEDIA_MAX_BYTES`). */
export interface IncomingMediaSettings {
  readonly incoming: "store" | "skip"
  readonly maxBytes: number
  /** Keep the bytes of media whose message was deleted for everyone. */
  readonly keepRevoked: boolean
}

export interface InboundContext {
  readonly sessionId: string
  /**
   * The session's row as its connection began (read then, or by the restore): its identity and
   * settings. `Ready` compares the account with it instead of reading the row again.
   */
  readonly linkedFrom: Option.Option<SessionRow>
  readonly media: IncomingMediaSettings
  /** Fetches a received message's media over the connection the event came on. */
  readonly downloadMedia: (media: InboundMedia) => Effect.Effect<Uint8Array, EngineError>
  readonly setStatus: (next: SessionStatus, error?: Omit<LastError, "at">) => Effect.Effect<void>
  readonly showQr: (qr: { readonly qr: string; readonly expiresAt: Date }) => Effect.Effect<void, StoreUnavailable>
  readonly markReady: Effect.Effect<void>
  /** Rejects a ringing call on the connection the event came on (`rejectCalls`). */
  readonly rejectCall: (callId: string, from: string) => Effect.Effect<void, EngineError>
  /** Shows the account online (`markOnlineOnConnect`). */
  readonly setOnline: Effect.Effect<void, EngineError>
  /** Hands a message the runtime stored as `pending` (the row as stored) to the session's outbound lane. */
  readonly queueSend: (row: MessageRow) => Effect.Effect<void>
  /** The engine's id for a message the runtime sends (see `Engine.newMessageId`). */
  readonly newMessageId: () => string
}

/**
 * Maps what an engine reports to the session's state, the Store and domain events. The Store
 * is written first, so that everything published can be read back.
 */
export const handleEngineEvent = (event: EngineEvent, context: InboundContext) =>
  Effect.gen(function*() {
    // A change and the events announcing it are one transaction (see Events: the outbox).
    const transactionally = (yield* Store).transactionally
    switch (event._tag) {
      case "Qr":
        return yield* context.showQr({ qr: event.qr, expiresAt: event.expiresAt })
      case "Authenticating":
        return yield* context.setStatus("authenticating")
      case "Ready": {
        const sessions = yield* SessionRepo
        const { phone, pushName, lid } = event.me
        // The row the link began with, not read again: a reconnect of the same account changes
        // nothing, and thousands of sessions restored at once neither read nor write.
        const row = Option.getOrNull(context.linkedFrom)
        if (row !== null && (row.phone !== phone || row.pushName !== pushName || row.lid !== lid)) {
          yield* sessions.patch(context.sessionId, { phone, pushName, lid })
        }
        yield* context.markReady
        return yield* showOnlineIfAsked(context, settingsOrDefault(row?.settings ?? null))
      }
      case "MessageReceived":
        return yield* storeInbound(context, event.message, transactionally)
      case "ReactionReceived":
        return yield* transactionally(storeReaction(context.sessionId, event.reaction))
      case "MessageEdited":
        return yield* transactionally(applyEdit(context.sessionId, event.edit))
      case "MessageRevoked":
        return yield* transactionally(applyRevoke(context.sessionId, event.revoke, context.media.keepRevoked))
      case "PollVoteReceived":
        return yield* transactionally(applyPollVote(context.sessionId, event.vote))
      case "MessagePinned":
        return yield* applyPin(context.sessionId, event.pin)
      case "PresenceUpdated":
        return yield* transactionally(applyPresence(context.sessionId, event.presence))
      case "GroupChanged":
        return yield* transactionally(applyGroupChange(context.sessionId, event.change))
      case "LabelChanged":
        return yield* transactionally(applyLabelChange(context.sessionId, event.change))
      case "ContactsSeen":
        return yield* recordContacts(context.sessionId, event.contacts)
      case "ChatsChanged":
        return yield* applyChatChanges(context.sessionId, event.changes)
      case "HistoryReceived":
        return yield* importHistory(context, event.batch)
      case "ContactsChanged":
        return yield* applyContactChanges(context.sessionId, event.changes)
      case "JoinRequestsChanged":
        return yield* applyJoinRequest(context.sessionId, event.request)
      case "CallChanged":
        return yield* applyCall(context, event.call)
      case "MessageStatusChanged":
        return yield* applyReceipts(context.sessionId, [event])
      case "Closed":
        return
    }
  })

/** A person chat with someone the account blocked: WhatsApp may still hand it over; it is dropped. */
const fromBlocked = (sessionId: string, inbound: InboundMessage) =>
  inbound.chatId.endsWith("@g.us") || inbound.fromMe === true
    ? Effect.succeed(false)
    : Effect.flatMap(ContactRepo, (contacts) => contacts.isBlocked(sessionId, inbound.from))

/** Media is downloaded first, outside the transaction that stores and announces the message. */
const storeInbound = (context: InboundContext, inbound: InboundMessage, transactionally: Transactionally) =>
  Effect.gen(function*() {
    const { sessionId } = context
    const messages = yield* MessageRepo
    const existing = yield* messages.findByEngineId(sessionId, inbound.engineMessageId)
    if (Option.isSome(existing)) {
      // Engines hand over the same message again after a reconnect: once is enough. But one
      // that could not be read before (WhatsApp resends after a decryption failure) and can
      // be now takes its content, and is announced as received.
      const readable = inbound.type !== "unknown" && existing.value.type === "unknown"
      if (!readable) return
      const id = existing.value.id
      const kept = inbound.media === undefined ? undefined : yield* keepMedia(context, id, inbound.media)
      const content = { type: inbound.type, text: inbound.text, caption: inbound.caption ?? null, media: kept?.media ?? null, error: kept?.error ?? null }
      return yield* transactionally(Effect.gen(function*() {
        if (!(yield* messages.reviseUnreadable(id, content, DateTime.formatIso(yield* DateTime.now)))) return
        yield* announceReceived(sessionId, id, inbound)
      }))
    }
    if (yield* fromBlocked(sessionId, inbound)) return
    const sessions = yield* SessionRepo
    const me = Option.flatMapNullable(yield* sessions.findById(sessionId), (row) => row.phone)
    const row = yield* receivedRow(context, inbound, {
      from: inbound.from,
      to: Option.match(me, { onNone: () => "", onSome: (phone) => `${phone}@c.us` }),
      fromMe: false,
      status: "delivered",
      ack: 2,
      source: "live"
    })
    yield* transactionally(Effect.gen(function*() {
      yield* messages.insert(row)
      // Whoever writes is someone the session knows (a channel is not a person).
      if (inbound.fromPhone !== null || inbound.fromLid !== null) {
        yield* recordContacts(sessionId, [{ phone: inbound.fromPhone, lid: inbound.fromLid, name: null }])
      }
      yield* announceReceived(sessionId, row.id, inbound)
    }))
  })

/** What a received message carries besides text and media. */
const extrasOf = (inbound: InboundMessage): MessageExtras => ({
  ...noExtras,
  location: inbound.location ?? null,
  contacts: inbound.contacts ?? null,
  poll: inbound.poll === undefined
    ? null
    : {
      name: inbound.poll.name,
      options: inbound.poll.options,
      selectableCount: inbound.poll.selectableCount,
      secret: inbound.poll.secret === null ? null : Buffer.from(inbound.poll.secret).toString("base64")
    },
  linkPreview: inbound.linkPreview ?? null,
  forwarded: inbound.forwarded ?? false
})

/** How a received message stands: who it is from and to, and how far along it is (live: delivered; history: sent or read). */
export type ReceivedAs = Pick<MessageRow, "from" | "to" | "fromMe" | "status" | "ack" | "source">

/**
 * A received message (live, or from the phone's history) as a new row. Its media is downloaded
 * first, so the caller inserts the row in its own transaction; a failed download is the row's error.
 */
export const receivedRow = (context: InboundContext, inbound: InboundMessage, as: ReceivedAs) =>
  Effect.gen(function*() {
    const receivedAt = yield* Clock.currentTimeMillis
    const id = uuidv7(receivedAt)
    const kept = inbound.media === undefined ? undefined : yield* keepMedia(context, id, inbound.media)
    const at = new Date(receivedAt).toISOString()
    const row: MessageRow = {
      ...extrasOf(inbound),
      id,
      sessionId: context.sessionId,
      chatId: inbound.chatId,
      ...as,
      type: inbound.type,
      text: inbound.text,
      caption: inbound.caption ?? null,
      media: kept?.media ?? null,
      error: inbound.error ?? kept?.error ?? null,
      engineMessageId: inbound.engineMessageId,
      quotedMessageId: null,
      mentions: null,
      batchId: null,
      timestamp: inbound.timestamp.toISOString(),
      createdAt: at,
      updatedAt: at
    }
    return row
  })

/** Longest a received message's media may take to download before the message is stored without it. */
const DOWNLOAD_TIMEOUT = "60 seconds"

/**
 * Downloads a received message's media into the media store (unless `INCOMING_MEDIA=skip`). A
 * failed or oversized download does not lose the message: it is stored with what the media is,
 * `stored: false`, and an error saying why.
 */
export const keepMedia = (context: InboundContext, messageId: string, media: InboundMedia) =>
  Effect.gen(function*() {
    const described: MediaRecord = { mimetype: media.mimetype, filename: media.filename, size: media.size, ptt: media.ptt, stored: false }
    if (context.media.incoming === "skip") return { media: described, error: null }
    const notKept = (code: string, message: string) => ({ media: described, error: { code, message } })
    const tooLarge = notKept("MEDIA_TOO_LARGE", `the media is larger than MEDIA_MAX_BYTES (${context.media.maxBytes} bytes) and was not kept`)
    if (media.size !== null && media.size > context.media.maxBytes) return tooLarge
    const downloaded = yield* context.downloadMedia(media).pipe(
      Effect.timeoutFail({
        duration: DOWNLOAD_TIMEOUT,
        onTimeout: () => ({ code: "DOWNLOAD_TIMEOUT", message: `the download took longer than ${DOWNLOAD_TIMEOUT}` })
      }),
      Effect.either
    )
    if (downloaded._tag === "Left") {
      yield* Effect.logWarning("incoming media could not be downloaded", downloaded.left.code)
      return notKept("MEDIA_DOWNLOAD_FAILED", `the media could not be downloaded: ${downloaded.left.message}`)
    }
    const data = downloaded.right
    if (data.length > context.media.maxBytes) return tooLarge
    const stored = yield* (yield* MediaStore).put(mediaKey(context.sessionId, messageId), data).pipe(Effect.either)
    if (stored._tag === "Left") {
      yield* Effect.logError("incoming media could not be stored", stored.left.message)
      return notKept("MEDIA_STORE_UNAVAILABLE", "the media was downloaded but could not be stored")
    }
    return { media: { ...described, size: data.length, stored: true }, error: null }
  })

/**
 * Someone set (or took back) a reaction on a message of a chat. One to a message the Store does
 * not know (older than the session, or deleted) has nothing to attach to and is dropped.
 */
const storeReaction = (sessionId: string, reaction: InboundReaction) =>
  Effect.gen(function*() {
    const messages = yield* MessageRepo
    const target = yield* messages.findByEngineId(sessionId, reaction.targetEngineMessageId)
    if (Option.isNone(target)) return yield* Effect.logDebug("reaction to an unknown message", reaction.targetEngineMessageId)
    const { chatId, id } = target.value
    const changed = yield* messages.setReaction(id, reaction.from, reaction.emoji, reaction.timestamp.toISOString())
    if (!changed) return
    yield* (yield* Events).publish(makeEvent("message.reaction", sessionId, {
      messageId: id,
      chatId,
      emoji: reaction.emoji,
      from: reaction.from
    }, yield* DateTime.nowAsDate))
  })

/**
 * Whoever connects with `markOnlineOnConnect` is shown online once ready. Every engine is asked,
 * whether or not it did so itself on connecting (Baileys does): being set online twice changes
 * nothing, and an engine that did not is covered. A refusal only costs the presence.
 */
const showOnlineIfAsked = (context: InboundContext, settings: SessionSettings) =>
  settings.markOnlineOnConnect
    ? context.setOnline.pipe(Effect.catchAll((error) => Effect.logInfo("could not show the account online on connecting", error.code)))
    : Effect.void

const announceReceived = (sessionId: string, id: string, inbound: InboundMessage) =>
  Effect.gen(function*() {
    const message = yield* (yield* MessageRepo).findById(sessionId, id)
    if (Option.isNone(message)) return
    // A contact's status update is no message of a chat: it has an event of its own.
    if (inbound.chatId === STATUS_CHAT_ID) {
      return yield* (yield* Events).publish(makeEvent("status.received", sessionId, { message: message.value }, yield* DateTime.nowAsDate))
    }
    // Both ids of the sender, as far as known (WhatsApp increasingly shows only the LID).
    yield* (yield* Events).publish(makeEvent("message.received", sessionId, {
      message: message.value,
      phone: inbound.fromPhone,
      lid: inbound.fromLid
    }, yield* DateTime.nowAsDate))
  })

/** A network receipt: a message's status moved on. */
export type Receipt = Extract<EngineEvent, { _tag: "MessageStatusChanged" }>

/**
 * Receipts that came together, applied together. A session's events are handled one after
 * another, so the actor hands over every receipt already waiting in a row (under load, with
 * those that came within the same turn: see `takeEventsFrom`), and the status moves, their
 * history, the reactions `message.sent` carries and the events are each a statement or two for
 * the whole chunk (on Postgres every statement waits a turn of a busy event loop; one by one, a
 * receipt was ~4 of them). The events keep the receipts' order, so a message's `message.sent`
 * still comes before its `delivered`. Store work only, on the services given: it runs in the
 * transaction its caller has open (the session's group commit, `applyReceipts`).
 */
export const receiptChanges = (messages: MessageRepo["Type"], events: EventsService, sessionId: string, receipts: ReadonlyArray<Receipt>) =>
  Effect.gen(function*() {
    const now = yield* DateTime.nowAsDate
    const moves = yield* messages.updateStatusesByEngineId(sessionId, receipts, now.toISOString())
    // An unknown message, or no advance (statuses never go back): nothing to announce.
    const changes = moves.filter(Option.isSome).map((move) => move.value)
    // `message.sent` marks the network taking the message (one tick), with the message as
    // stored; an engine that reports no server ack goes from pending straight to delivered.
    const leavesPending = (change: StatusTransition) => change.previousStatus === "pending" && change.row.status !== "failed"
    const leaving = changes.filter(leavesPending)
    const sentMessages = yield* messages.leftPendingAll(leaving)
    // By the change itself: a chunk may take a message out of pending and then further on.
    const sentMessageOf = new Map(leaving.map((change, i) => [change, sentMessages[i]!]))
    const announcements = changes.flatMap((change) => statusEvents(sessionId, change, sentMessageOf.get(change), now))
    // One outbox write for the events of the whole chunk.
    if (announcements.length > 0) yield* events.publishAll(announcements)
  })

/** Receipts that came together, in one transaction of their own (see `receiptChanges`). */
export const applyReceipts = (sessionId: string, receipts: ReadonlyArray<Receipt>) =>
  Effect.gen(function*() {
    const { transactionally } = yield* Store
    return yield* transactionally(receiptChanges(yield* MessageRepo, yield* Events, sessionId, receipts))
  })

/** The events of one status change: `message.sent` (when it left pending), the ack, `message.failed`. */
const statusEvents = (sessionId: string, change: StatusTransition, sentMessage: Message | undefined, now: Date) => {
  const { previousStatus, row: updated } = change
  const sent = sentMessage === undefined ? [] : [makeEvent("message.sent", sessionId, { message: sentMessage }, now)]
  const ack = makeEvent("message.ack", sessionId, {
    messageId: updated.id,
    chatId: updated.chatId,
    status: updated.status,
    ack: updated.ack,
    previousStatus
  }, now)
  const failed = updated.status === "failed"
    ? [makeEvent("message.failed", sessionId, { messageId: updated.id, chatId: updated.chatId, error: updated.error }, now)]
    : []
  return [...sent, ack, ...failed]
}
