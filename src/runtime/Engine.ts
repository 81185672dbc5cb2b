import { Cause, Chunk, Context, Data, Effect, Option, Queue, Scope, Stream } from "effect"
import type { ContactCard, LinkPreview, Location, MediaKind, MessageStatus, MessageType } from "../domain/Message.js"
import type { Me } from "../domain/Session.js"
import type { StoreUnavailable } from "../domain/Errors.js"
import { yieldToEventLoop } from "./eventLoop.js"
import type {
  ChannelOperations,
  ContactOperations,
  ContactSeen,
  GroupChange,
  GroupOperations,
  LabelChange,
  LabelOperations
} from "./EngineDirectory.js"
import type { SessionSettings } from "../domain/SessionSettings.js"
import type {
  AccountContactOperations,
  CallOperations,
  ChatOperations,
  GroupAdminOperations,
  HistoryBatch,
  InboundCall,
  InboundChatChange,
  InboundContactChange,
  InboundJoinRequest,
  ProfileOperations
} from "./EngineAccount.js"
import type {
  InboundEdit,
  InboundPin,
  InboundPollVote,
  InboundPresence,
  InboundRevoke,
  MessageActionOperations,
  MessageTarget,
  PollDefinition,
  PresenceOperations,
  StoredPoll
} from "./EngineMessageActions.js"

/**
 * The only boundary between Switchboard and the network. A session actor asks its engine for
 * a connection; the connection reports what happens on the wire as a stream of `EngineEvent`s
 * and offers the operations the session can perform. Chat ids cross this boundary in the
 * API's form (`…@c.us`); an engine translates to its own wire form inside.
 */

/** Why a connection ended, and what the actor should do about it. */
export type CloseKind =
  /** Transient: reconnect on the backoff schedule. */
  | "retry"
  /** The server asks for an immediate new connection (e.g. Baileys' 515 after pairing). */
  | "restart"
  /** The account was unlinked: credentials are void, a new QR is needed. */
  | "logged_out"
  /** Terminal until an operator starts the session again (QR expired, replaced, banned…). */
  | "fatal"

export interface CloseReason {
  readonly kind: CloseKind
  readonly code: string
  readonly message: string
}

export type { MediaKind } from "../domain/Message.js"

/**
 * Media of a received message as the network describes it. `ref` is the engine's own handle
 * for fetching the bytes (`EngineConnection.downloadMedia`); only that engine reads it (the
 * sandbox keeps plain JSON there, since it holds undelivered events in the Store).
 */
export interface InboundMedia {
  readonly mimetype: string
  readonly filename: string | null
  /** As announced by the sender; null when the network does not say. */
  readonly size: number | null
  /** An audio recorded as a voice note. */
  readonly ptt: boolean
  readonly ref: unknown
}

export interface InboundMessage {
  readonly engineMessageId: string
  /** The chat in the API's form: the phone id (`…@c.us`) when known, else the LID (`…@lid`). */
  readonly chatId: string
  /** Who wrote it (in a group, the participant), in the same form as `chatId`. */
  readonly from: string
  /**
   * Written by this account on another device (the phone): history sync carries those. `from`
   * is then the account's own id and `chatId` the chat it went to.
   */
  readonly fromMe?: boolean | undefined
  /** Both ids of the sender as far as known: WhatsApp shows one, the other comes from mappings. */
  readonly fromPhone: string | null
  readonly fromLid: string | null
  /** `unknown`: the engine received something it could not read (see `error`). */
  readonly type: "text" | MediaKind | "location" | "contact" | "poll" | "unknown"
  readonly text: string | null
  /** The caption of a media message. */
  readonly caption?: string | null | undefined
  readonly media?: InboundMedia | undefined
  readonly location?: Location | undefined
  /** The cards of a `contact` message (one or several). */
  readonly contacts?: ReadonlyArray<ContactCard> | undefined
  readonly poll?: PollDefinition | undefined
  /** The preview the sender attached to a text (its thumbnail base64). */
  readonly linkPreview?: LinkPreview | undefined
  /** Marked as forwarded by the sender. */
  readonly forwarded?: boolean | undefined
  readonly timestamp: Date
  /** Set when the message could not be read, e.g. `DECRYPTION_FAILED`: surfaced, not swallowed. */
  readonly error?: { readonly code: string; readonly message: string } | undefined
}

/**
 * A reaction someone set on a message of the chat (to one this session sent, or received).
 * `emoji` is "" when they took their reaction back.
 */
export interface InboundReaction {
  readonly chatId: string
  /** Who reacted, in the same form as `InboundMessage.from`. */
  readonly from: string
  readonly targetEngineMessageId: string
  readonly emoji: string
  readonly timestamp: Date
}

/** A message this session sent, as the Store holds it: what an engine needs to resend it. */
export interface StoredOutbound {
  readonly chatId: string
  readonly text: string
}

export type EngineEvent = Data.TaggedEnum<{
  /** A QR to show; replaces any earlier one. */
  Qr: { readonly qr: string; readonly expiresAt: Date }
  /** The QR was scanned / the pairing code entered: linking is in progress. */
  Authenticating: {}
  /** Logged in and able to send. */
  Ready: { readonly me: Me }
  MessageReceived: { readonly message: InboundMessage }
  ReactionReceived: { readonly reaction: InboundReaction }
  MessageEdited: { readonly edit: InboundEdit }
  MessageRevoked: { readonly revoke: InboundRevoke }
  PollVoteReceived: { readonly vote: InboundPollVote }
  MessagePinned: { readonly pin: InboundPin }
  PresenceUpdated: { readonly presence: InboundPresence }
  GroupChanged: { readonly change: GroupChange }
  LabelChanged: { readonly change: LabelChange }
  ContactsSeen: { readonly contacts: ReadonlyArray<ContactSeen> }
  /** A status change of a message this session sent. */
  /** Chats changed on another device (archived, pinned, muted, read, deleted) or were named. */
  ChatsChanged: { readonly changes: ReadonlyArray<InboundChatChange> }
  /** People changed their push name, about or picture, or the account (un)blocked them elsewhere. */
  ContactsChanged: { readonly changes: ReadonlyArray<InboundContactChange> }
  /** A call was offered to the account, or what became of it (accepted, rejected, timed out…). */
  CallChanged: { readonly call: InboundCall }
  /** A batch of the phone's history sync. */
  HistoryReceived: { readonly batch: HistoryBatch }
  /** Someone asked to join a group the account administers, or the request was answered. */
  JoinRequestsChanged: { readonly request: InboundJoinRequest }
  MessageStatusChanged: {
    readonly engineMessageId: string
    readonly status: MessageStatus
    readonly error?: { readonly code: string; readonly message: string } | undefined
  }
  /** The connection is over; the event stream ends after this one. */
  Closed: { readonly reason: CloseReason }
}>
export const EngineEvent = Data.taggedEnum<EngineEvent>()

/**
 * How the API answers an engine's refusal: the thing asked about does not exist (404), the
 * account may not do it (403: not a group admin…), it conflicts with the account's state (409:
 * not a business account…), the engine cannot do it at all (501), or the request is invalid (400).
 * Without one, an engine failure is a 502.
 */
export type EngineRefusal = "not_found" | "forbidden" | "conflict" | "not_supported" | "invalid"

export class EngineError extends Data.TaggedError("EngineError")<{
  readonly code: string
  readonly message: string
  /** True when retrying later may succeed (connection dropped, timeout). */
  readonly transient: boolean
  readonly refusal?: EngineRefusal | undefined
}> {}

/**
 * Persisted authentication state of one session (credentials and, for engines that have
 * them, Signal keys). Backed by the Store; `setKeys` is one transaction.
 */
export interface AuthState {
  readonly readCreds: Effect.Effect<Option.Option<unknown>, StoreUnavailable>
  readonly writeCreds: (creds: unknown) => Effect.Effect<void, StoreUnavailable>
  readonly getKeys: (type: string, ids: ReadonlyArray<string>) => Effect.Effect<Record<string, unknown>, StoreUnavailable>
  /** `null` deletes a key. All changes are applied atomically. */
  readonly setKeys: (changes: Record<string, Record<string, unknown | null>>) => Effect.Effect<void, StoreUnavailable>
  /** Wipes credentials and keys (logout). */
  readonly clear: Effect.Effect<void, StoreUnavailable>
}

export interface ConnectOptions {
  readonly sessionId: string
  readonly auth: AuthState
  /** A message this session sent, by its network id (WhatsApp asks again on retry receipts). */
  readonly lookupSent: (engineMessageId: string) => Effect.Effect<Option.Option<StoredOutbound>>
  /** A poll of this session's chats (sent or received), by its network id: to decrypt votes on it. */
  readonly lookupPoll: (engineMessageId: string) => Effect.Effect<Option.Option<StoredPoll>>
  /** The session's proxy URL, credentials included; engines must never log it. */
  readonly proxyUrl: Option.Option<string>
  /**
   * The session's settings as they were when it connected: `historySync` (what to import on
   * linking) and `markOnlineOnConnect` apply to the connection; the runtime handles the rest.
   */
  readonly settings: SessionSettings
}

/** Media to send: the bytes (at most `MEDIA_MAX_BYTES`, checked on intake) and what they are. */
export interface OutboundMedia {
  readonly kind: MediaKind
  readonly data: Uint8Array
  readonly mimetype: string
  readonly filename: string | null
  readonly caption: string | null
  /** Send an audio as a voice note. */
  readonly ptt: boolean
}

/** A link preview to attach to a text, fetched by the gateway; the thumbnail is a JPEG. */
export interface OutboundLinkPreview {
  readonly url: string
  readonly title: string | null
  readonly description: string | null
  readonly thumbnail: Uint8Array | null
}

/** How a text status update looks: its background (`#RRGGBB`) and font (0–9), when chosen. */
export interface StatusStyle {
  readonly backgroundColor: string | null
  readonly font: number | null
}

export type OutboundContent =
  | {
    readonly type: "text"
    readonly text: string
    readonly linkPreview?: OutboundLinkPreview | undefined
    /** A text status update's look (`status@broadcast` only). */
    readonly statusStyle?: StatusStyle | undefined
  }
  | { readonly type: "media"; readonly media: OutboundMedia }
  | { readonly type: "location"; readonly location: Location }
  /** vCards built by the gateway; one card, or several. */
  | { readonly type: "contacts"; readonly contacts: ReadonlyArray<{ readonly name: string; readonly vcard: string }> }
  /** The secret is chosen when the poll is accepted and kept, so a resend is the same poll. */
  | { readonly type: "poll"; readonly poll: PollDefinition & { readonly secret: Uint8Array } }

/**
 * A message of the chat that a send quotes: by key (who wrote it, sent or received), with what
 * it said, since the network carries a copy of the quoted content for the reply's preview.
 */
export interface QuotedMessage extends MessageTarget {
  readonly type: MessageType
  /** Its text, or its caption. */
  readonly text: string | null
}

export interface SendCommand {
  /**
   * The message's id on the network, chosen when the gateway accepted the message (see
   * `Engine.newMessageId`). Sending the same id again after a crash is a resend, which the
   * network recognises, not a second message.
   */
  readonly engineMessageId: string
  readonly chatId: string
  readonly content: OutboundContent
  /** The message this one replies to. */
  readonly quoted?: QuotedMessage | undefined
  readonly mentions?: ReadonlyArray<string> | undefined
  /** Marked as forwarded (the content is the forwarded message's). */
  readonly forwarded?: boolean | undefined
  /**
   * A status update (`chatId` is `status@broadcast`): the contacts who may see it. WhatsApp
   * encrypts a status to each of them, so the list is needed (and never empty).
   */
  readonly statusAudience?: ReadonlyArray<string> | undefined
}

/** Sets (or with `emoji` "" takes back) this session's reaction on a message of the chat. */
export interface ReactCommand {
  readonly chatId: string
  readonly target: MessageTarget
  readonly emoji: string
}

/**
 * One open connection of a session. An engine may keep its operations (`groups`, `chats`, …)
 * in getters of a class, as the sandbox does: wrap a connection by delegation
 * (`Object.create(connection, {...})`), not by spreading it, which drops them.
 */
export interface EngineConnection {
  /**
   * The connection's next events, waiting for one when none is there: in order, at least one,
   * `Closed` the last; none once the connection has ended (after `Closed`, or its scope closed).
   * What a session actor consumes, in a loop: a stream consumer was ~20 KB per idle session.
   */
  readonly takeEvents: Effect.Effect<ReadonlyArray<EngineEvent>>
  /**
   * The session has stored these events (taken from `takeEvents`): only now may the network
   * count them as delivered. Until then an engine keeps them owed (the sandbox holds them, Baileys
   * holds back the delivery receipts), so that a process killed between the hand-over and the
   * store gets them again on its next connection instead of losing them (issue 21). Events the
   * engine keeps nothing for are ignored; acknowledging twice is harmless.
   */
  readonly acknowledge: (events: ReadonlyArray<EngineEvent>) => Effect.Effect<void>
  /**
   * The same events as a stream (made from `takeEvents`: one or the other is consumed), each
   * batch acknowledged as it is taken: for consumers that keep nothing across a crash.
   */
  readonly events: Stream.Stream<EngineEvent>
  readonly send: (command: SendCommand) => Effect.Effect<{ readonly engineMessageId: string; readonly timestamp: Date }, EngineError>
  readonly react: (command: ReactCommand) => Effect.Effect<void, EngineError>
  /** The bytes of a received message's media (`InboundMedia.ref`). */
  readonly downloadMedia: (media: InboundMedia) => Effect.Effect<Uint8Array, EngineError>
  readonly requestPairingCode: (phoneNumber: string) => Effect.Effect<string, EngineError>
  readonly markRead: (chatId: string, engineMessageIds: ReadonlyArray<string>) => Effect.Effect<void, EngineError>
  /** Unlinks the account on the server side; the connection closes afterwards. */
  readonly logout: Effect.Effect<void, EngineError>
  readonly groups: GroupOperations & GroupAdminOperations
  readonly channels: ChannelOperations
  readonly labels: LabelOperations
  readonly contacts: ContactOperations & AccountContactOperations
  readonly messages: MessageActionOperations
  readonly presence: PresenceOperations
  readonly chats: ChatOperations
  readonly profile: ProfileOperations
  readonly calls: CallOperations
}

export class Engine extends Context.Tag("switchboard/Engine")<Engine, {
  readonly name: "sandbox" | "baileys"
  /** The WhatsApp Web version the engine presents to the network (`WA_VERSION`); null for the sandbox, which has none. */
  readonly clientVersion: string | null
  /** A fresh id in the network's own format, for a message about to be accepted. */
  readonly newMessageId: () => string
  /** Opens a connection that lives until the scope closes (which ends the socket). */
  readonly connect: (options: ConnectOptions) => Effect.Effect<EngineConnection, EngineError, Scope.Scope>
  /**
   * Drops whatever the engine keeps about a session beyond its `AuthState` (which the
   * gateway wipes itself); called when the session is deleted, after it was logged out.
   */
  readonly forget: (sessionId: string) => Effect.Effect<void>
}>() {}

/** How soon after the previous take a take counts as under load, and may linger (see `takeEventsFrom`). */
const LINGER_WHEN_WITHIN_MS = 5

/**
 * `takeEvents` over the queue an engine offers a connection's events to: what is waiting (at
 * least one, at most `max`), cut after `Closed`; nothing once `Closed` was taken or the queue
 * is shut down. `taken` runs for each event just before it is handed over.
 *
 * Under load, when what is waiting ends with a receipt, the take lingers for one turn of the
 * event loop and adds whatever came meanwhile: the receipts of the messages a lane sends in one
 * turn then reach the session together, to be applied in one transaction (`applyReceipts`),
 * rather than one transaction each as the session's consumer woke for every one (issue 19:
 * 1.1 transactions per message sent, ~250 Effect operations). Under load means the previous
 * take came back less than `LINGER_WHEN_WITHIN_MS` ago; a receipt after a quiet spell is
 * handed over at once, so a lone send is `sent` no later than before (an edit or a vote right
 * after a send waits for that anyway, see `NETWORK_WAIT` in `MessageActions`).
 */
export const takeEventsFrom = (
  queue: Queue.Dequeue<EngineEvent>,
  max: number,
  taken?: (event: EngineEvent) => Effect.Effect<void>,
  /** How soon after the previous take a take counts as under load (default `LINGER_WHEN_WITHIN_MS`). */
  lingerWhenWithinMs = LINGER_WHEN_WITHIN_MS
): Effect.Effect<ReadonlyArray<EngineEvent>> => {
  let ended = false
  /** When the previous take came back (performance.now()); -Infinity before the first. */
  let lastTakenAt = Number.NEGATIVE_INFINITY
  const lingering = (chunk: Chunk.Chunk<EngineEvent>) => {
    const busy = performance.now() - lastTakenAt < lingerWhenWithinMs
    return busy && Chunk.unsafeLast(chunk)._tag === "MessageStatusChanged" && chunk.length < max
      ? Effect.map(Effect.zipRight(yieldToEventLoop, Queue.takeUpTo(queue, max - chunk.length)), (more) => Chunk.appendAll(chunk, more))
      : Effect.succeed(chunk)
  }
  const take = Effect.catchAllCause(Effect.flatMap(Queue.takeBetween(queue, 1, max), lingering), (cause) =>
    Effect.flatMap(Queue.isShutdown(queue), (down) =>
      down && Cause.isInterruptedOnly(cause) ? Effect.succeed(Chunk.empty<EngineEvent>()) : Effect.failCause(cause)))
  return Effect.suspend(() =>
    ended ? Effect.succeed([]) : Effect.flatMap(take, (chunk) => {
      const batch: Array<EngineEvent> = []
      for (const event of chunk) {
        batch.push(event)
        if (event._tag === "Closed") break
      }
      ended = batch.length === 0 || batch[batch.length - 1]!._tag === "Closed"
      lastTakenAt = performance.now()
      return taken === undefined ? Effect.succeed(batch) : Effect.as(Effect.forEach(batch, taken, { discard: true }), batch)
    }))
}

/**
 * A connection's events as a stream, from its `takeEvents`: ends after `Closed`. Each batch is
 * acknowledged (`acknowledge`) as it is taken, before the stream's consumer sees it.
 */
export const streamOfEvents = (
  takeEvents: Effect.Effect<ReadonlyArray<EngineEvent>>,
  acknowledge: (events: ReadonlyArray<EngineEvent>) => Effect.Effect<void>
): Stream.Stream<EngineEvent> =>
  Stream.repeatEffectChunkOption(Effect.flatMap(takeEvents, (batch) =>
    batch.length === 0 ? Effect.fail(Option.none()) : Effect.as(acknowledge(batch), Chunk.unsafeFromArray(batch))))
