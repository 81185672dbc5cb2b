import { untilStoreIsBack } from "./storeOutage.js"
import { retryAfterFailure } from "./retryAfterFailure.js"
import { DateTime, Deferred, Duration, Effect, Option, Ref, Schedule } from "effect"
import { mediaKey, type MediaStoreService } from "./ports/MediaStore.js"
import type { MessageRow } from "./ports/store/MessageRepo.js"
import type { StoreUnavailable } from "../domain/Errors.js"
import type { MessageRepo } from "./ports/store/MessageRepo.js"
import { Store } from "./ports/store/Store.js"
import { SessionRepo } from "./ports/store/SessionRepo.js"
import { LinkPreviews } from "./LinkPreviews.js"
import { firstUrlIn } from "./network/linkPreview.js"
import { typingOf } from "./typing.js"
import { Events } from "./Events.js"
import { makeEvent } from "../domain/makeEvent.js"
import { type EngineConnection, EngineError, type OutboundContent, type OutboundLinkPreview, type QuotedMessage } from "./Engine.js"
import { type LinkPreview, MediaKind, type MessageType } from "../domain/Message.js"
import { makePacer } from "./Pacing.js"
import type { ReadyConnection } from "./ReadyConnection.js"
import { type PacingSettings } from "../domain/Settings.js"

export interface OutboundDeps {
  readonly sessionId: string
  readonly pacing: PacingSettings
  /** Some while the session is ready; the lane sends only then. */
  readonly readyConnection: ReadyConnection
  readonly messages: MessageRepo["Type"]
  readonly mediaStore: MediaStoreService
  /** Kept at the number of sends in the lane (the one going out included), for a graceful shutdown. */
  readonly queuedSends: Ref.Ref<number>
}

const mediaTypes: ReadonlySet<MessageType> = new Set(MediaKind.literals)
const isMediaType = (type: MessageType): type is MediaKind => mediaTypes.has(type)

/** A stored preview as the engines take it (the thumbnail back to bytes). */
const outboundPreview = (preview: LinkPreview | null): OutboundLinkPreview | undefined =>
  preview === null
    ? undefined
    : {
      url: preview.url,
      title: preview.title,
      description: preview.description,
      thumbnail: preview.thumbnail === undefined ? null : Buffer.from(preview.thumbnail, "base64")
    }

/** A quoted message as the engines take it: one that reached the network, sent or received. */
const quotedOf = (row: MessageRow): Option.Option<QuotedMessage> =>
  row.engineMessageId === null
    ? Option.none()
    : Option.some({ engineMessageId: row.engineMessageId, fromMe: row.fromMe, from: row.from, type: row.type, text: row.text ?? row.caption })

/** Transient engine errors are retried a few times before the message is marked failed. */
const transientRetry = Schedule.exponential("500 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

/** A session's outbound lane (see `makeOutbound`). */
export type Outbound = Effect.Effect.Success<ReturnType<typeof makeOutbound>>

/**
 * The session's outbound lane: stored `pending` messages go out one at a time, in the order
 * they were accepted, whenever the session is ready, no faster than the session's pacing.
 * While it is not ready they wait; callers are refused only past OUTBOUND_BACKLOG_MAX (see
 * services/outboundBacklog.ts). Each message
 * carries the engine id it was given when accepted, so a resend after a crash is recognised
 * as the same message by the network rather than delivered twice. The network's
 * acknowledgements then move the status on (see InboundEvents).
 */
export const makeOutbound = (deps: OutboundDeps) =>
  Effect.gen(function*() {
    const events = yield* Events
    const pacer = yield* makePacer(deps.sessionId, deps.pacing)
    const transactionally = (yield* Store).transactionally
    const sessions = yield* SessionRepo
    const linkPreviews = yield* LinkPreviews
    /**
     * The lane: the ids waiting, in the order they came (the one going out stays first until it
     * is done), and a Deferred made only while the lane waits for one. Every session has a lane,
     * idle or not; the Queue this replaces was ~1.3 KB each.
     */
    const queued = new Set<string>()
    let wakeLane: Deferred.Deferred<void> | undefined
    const nextInLane: Effect.Effect<string> = Effect.suspend(() => {
      const first = queued.values().next()
      if (first.done !== true) return Effect.succeed(first.value)
      return Effect.flatMap(Deferred.make<void>(), (made) => Effect.zipRight(Deferred.await(wakeLane = made), nextInLane))
    })
    /** The rows handed over with their ids (as stored when accepted): the lane need not read them back. */
    const handedOver = new Map<string, MessageRow>()
    const recount = Effect.suspend(() => Ref.set(deps.queuedSends, queued.size))

    const awaitConnection = deps.readyConnection.await

    /** What goes on the wire; media is read back from the media store (it survives restarts there). */
    const contentOf = (row: MessageRow): Effect.Effect<OutboundContent, EngineError> => {
      const { media } = row
      if (row.location !== null) return Effect.succeed({ type: "location", location: row.location })
      if (row.contacts !== null) {
        return Effect.succeed({ type: "contacts", contacts: row.contacts.map(({ name, vcard }) => ({ name, vcard })) })
      }
      if (row.poll !== null) {
        const { name, options, secret, selectableCount } = row.poll
        return Effect.succeed({
          type: "poll",
          poll: { name, options, selectableCount, secret: Buffer.from(secret ?? "", "base64") }
        })
      }
      if (!isMediaType(row.type) || media === null) {
        return Effect.succeed({
          type: "text",
          text: row.text ?? "",
          linkPreview: outboundPreview(row.linkPreview),
          statusStyle: row.sendOptions?.statusStyle
        })
      }
      const kind = row.type
      return deps.mediaStore.read(mediaKey(row.sessionId, row.id)).pipe(
        Effect.mapError((error) => new EngineError({ code: "MEDIA_STORE_UNAVAILABLE", message: error.message, transient: true })),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new EngineError({ code: "MEDIA_MISSING", message: "the media of this message is no longer in the media store", transient: false })),
          onSome: (data) => Effect.succeed<OutboundContent>({
            type: "media",
            media: { kind, data, mimetype: media.mimetype, filename: media.filename, caption: row.caption, ptt: media.ptt }
          })
        }))
      )
    }

    const isUnsent = (row: Option.Option<MessageRow>): row is Option.Some<MessageRow & { readonly engineMessageId: string }> =>
      Option.isSome(row) && row.value.status === "pending" && row.value.engineMessageId !== null

    /**
     * The row as it is now. Only a batch's messages can change while they wait (`cancelBatch`
     * fails them): those are read again; any other pending row stays as it was handed over.
     */
    const latest = (row: MessageRow): Effect.Effect<Option.Option<MessageRow>, StoreUnavailable> =>
      row.batchId === null ? Effect.succeed(Option.some(row)) : deps.messages.findRow(row.id)

    /** The message's row: the one handed over, else (a lane restarted, a cluster hand-over) read from the Store. */
    const rowOf = (messageId: string): Effect.Effect<Option.Option<MessageRow>, StoreUnavailable> => {
      const row = handedOver.get(messageId)
      return row === undefined ? deps.messages.findRow(messageId) : latest(row)
    }

    /**
     * A text's link preview, made once before its turn (within the 5 s of LinkPreviews) and kept
     * on the row, so that a resend after a restart sends the same one. Only for a text with a
     * URL whose caller did not say `linkPreview: false`; without a preview the text goes as it is.
     */
    const attachLinkPreview = (row: MessageRow): Effect.Effect<MessageRow, StoreUnavailable> => {
      const wanted = row.type === "text" && row.linkPreview === null && row.sendOptions?.linkPreview !== false
      const { text } = row
      if (!wanted || text === null || firstUrlIn(text) === undefined) return Effect.succeed(row)
      return Effect.gen(function*() {
        const session = yield* sessions.findById(deps.sessionId)
        const proxyUrl = Option.match(session, { onNone: () => null, onSome: (session) => session.proxyUrl })
        const preview = yield* linkPreviews.previewOf(text, proxyUrl)
        if (Option.isNone(preview)) return row
        yield* deps.messages.setLinkPreview(row.id, preview.value, (yield* DateTime.nowAsDate).toISOString())
        return { ...row, linkPreview: preview.value }
      })
    }

    /**
     * Shows "typing…" (or "recording…") in the chat for the time the caller asked, before the
     * message goes out; the returned effect clears it. Presence is a courtesy: an engine that
     * refuses it delays nothing and fails nothing.
     */
    const showTyping = (connection: EngineConnection, row: MessageRow): Effect.Effect<Effect.Effect<void>> => {
      const typing = typingOf(row)
      if (typing === undefined) return Effect.succeed(Effect.void)
      return Effect.gen(function*() {
        const { chatId } = row
        const setPresence = (state: "typing" | "recording" | "paused") =>
          connection.presence.set({ chatId, state }).pipe(
            Effect.catchAll((error) => Effect.logInfo(`could not show ${state} before a send; sending all the same`, error.code))
          )
        yield* setPresence(typing.state)
        yield* Effect.sleep(Duration.millis(typing.millis))
        return setPresence("paused")
      })
    }

    /** Sends a stored `pending` message; false when it was not (no longer) to be sent. */
    const attempt = (inHand: MessageRow) =>
      Effect.gen(function*() {
        const messageId = inHand.id
        // The pacing may have held it back for minutes: a cancel in the meantime is heard.
        let row = yield* latest(inHand)
        if (!isUnsent(row)) return false
        const clearTyping = yield* showTyping(yield* awaitConnection, row.value)
        // Typing may take half a minute: likewise.
        if (typingOf(row.value) !== undefined) {
          row = yield* latest(row.value)
          if (!isUnsent(row)) return yield* Effect.as(clearTyping, false)
        }
        const { chatId, engineMessageId, mentions, quotedMessageId } = row.value
        const quoted = quotedMessageId === null ? Option.none() : yield* deps.messages.findRow(quotedMessageId)
        const send = Effect.gen(function*() {
          const content = yield* contentOf(row.value)
          const connection = yield* awaitConnection
          return yield* connection.send({
            engineMessageId,
            chatId,
            content,
            quoted: Option.getOrUndefined(Option.flatMap(quoted, quotedOf)),
            mentions: mentions ?? undefined,
            forwarded: row.value.forwarded,
            statusAudience: row.value.sendOptions?.statusAudience
          })
        })
        const sent = yield* retryAfterFailure(send, { schedule: transientRetry, while: (error: EngineError) => error.transient }).pipe(
          Effect.either,
          Effect.zipLeft(clearTyping)
        )
        if (sent._tag === "Right") return true
        const error = { code: sent.left.code, message: sent.left.message }
        yield* transactionally(Effect.gen(function*() {
          const at = yield* DateTime.nowAsDate
          const failed = yield* deps.messages.updateStatus(messageId, "failed", at.toISOString(), error)
          if (Option.isSome(failed)) yield* events.publish(makeEvent("message.failed", deps.sessionId, { messageId, chatId, error }, at))
        }))
        return true
      })

    /**
     * A message in its turn. A message that is no longer pending (cancelled) takes no turn, and
     * a turn is only taken once the session can send (a turn taken while disconnected would be
     * spent on waiting); the row is read again in the turn, as a cancel may have come meanwhile.
     */
    const sendOne = (messageId: string) =>
      Effect.gen(function*() {
        const row = yield* rowOf(messageId)
        if (!isUnsent(row)) return
        yield* awaitConnection
        const withPreview = yield* attachLinkPreview(row.value)
        yield* pacer.paced(attempt(withPreview))
      })

    const sendNext = Effect.flatMap(nextInLane, (messageId) =>
      Effect.ensuring(
        // A message in its turn is sent once the Store answers again: it is not dropped.
        untilStoreIsBack(sendOne(messageId), "sending a queued message"),
        Effect.zipRight(Effect.sync(() => {
          queued.delete(messageId)
          handedOver.delete(messageId)
        }), recount)
      ))
    /**
     * One message after another, without `Effect.forever`'s yield to the scheduler between them
     * (a hop per message); the lane still yields when it waits for a message, and the runtime
     * makes a long run of work yield on its own.
     */
    const lane: Effect.Effect<never, never, never> = Effect.flatMap(sendNext, () => lane)

    return {
      /** The lane itself; runs until interrupted. */
      run: lane,
      /**
       * Idempotent: a message already waiting is not queued twice. `row`, the message as stored,
       * when the caller has it: the lane then reads nothing back for it.
       */
      enqueue: (messageId: string, row?: MessageRow) =>
        Effect.suspend(() => {
          if (queued.has(messageId)) return Effect.void
          queued.add(messageId)
          if (row !== undefined) handedOver.set(messageId, row)
          const waiting = wakeLane
          wakeLane = undefined
          return waiting === undefined ? recount : Effect.zipRight(recount, Deferred.succeed(waiting, undefined))
        })
    }
  })
