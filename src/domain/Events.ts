import { Schema } from "effect"
import type { Call, CallStatus } from "./Call.js"
import type { ChatChanges } from "./Chat.js"
import type { ContactChanges } from "./Contact.js"
import type { Group, JoinRequestAction, MemberAddMode, ParticipantAction } from "./Group.js"
import type { Label } from "./Label.js"
import type { Message, MessageStatus, PresenceState } from "./Message.js"
import type { SessionStatus } from "./Session.js"

/** The event kinds of the catalog: what webhooks and `/api/events` deliver. */
export const EventKind = Schema.Literal(
  "session.status",
  "session.qr",
  "message.received",
  "message.sent",
  "message.ack",
  "message.failed",
  "message.reaction",
  "message.revoked",
  "message.edited",
  "poll.vote",
  "presence.update",
  "group.join",
  "group.leave",
  "group.update",
  "group.participants",
  "label.update",
  "chat.update",
  "contact.update",
  "status.received",
  "call.received",
  "call.update",
  "session.history",
  "group.request",
  "session.unstable",
  /** Sent by `POST /api/webhooks/{id}/test` to that webhook only. */
  "webhook.test"
)
export type EventKind = typeof EventKind.Type

/**
 * The envelope every consumer sees (webhook body, SSE data), as the wire carries it, for a
 * receiver to decode: `data` is whatever the kind says (`EventData`), unread here. In a program,
 * the type `DomainEvent` is the union with `data` typed per kind.
 */
export const DomainEventEnvelope = Schema.Struct({
  id: Schema.String,
  event: EventKind,
  sessionId: Schema.String,
  timestamp: Schema.String,
  data: Schema.Unknown
})

/** A message and the chat it is in, as the events about one message name them. */
interface AboutMessage {
  readonly messageId: string
  readonly chatId: string
}

/** What a `group.update` changed: the fields that changed, and only those. */
export interface GroupUpdate {
  readonly subject?: string
  readonly description?: string | null
  readonly announce?: boolean
  readonly restrict?: boolean
  readonly memberAddMode?: MemberAddMode
  readonly approval?: boolean
}

/** `group.join`, `group.leave`, `group.update` and `group.participants`. */
export interface GroupEventData {
  readonly groupId: string
  /** The group as it is now, when the engine knows it whole. */
  readonly group?: Group
  /** `group.update`: the fields that changed. */
  readonly update?: GroupUpdate
  /** `group.participants`: who, and what happened to them. */
  readonly participants?: ReadonlyArray<string>
  readonly action?: ParticipantAction
  /** Who did it, when known. */
  readonly by: string | null
}

/**
 * What each kind's `data` holds: the one catalog `makeEvent` builds from and the `DomainEvent`
 * union is derived from, so the two cannot disagree. `Complete` refuses a kind left out of it
 * or one that `EventKind` does not list.
 */
export type EventData = Complete<{
  "session.status": { readonly status: SessionStatus; readonly previousStatus: SessionStatus; readonly reason: string | null }
  "session.qr": { readonly qr: string; readonly expiresAt: string }
  /** Both ids of the sender, as far as known (WhatsApp increasingly shows only the LID). */
  "message.received": { readonly message: Message; readonly phone: string | null; readonly lid: string | null }
  /** The network took the message: status `sent`. */
  "message.sent": { readonly message: Message }
  /** Every later status change. */
  "message.ack": AboutMessage & { readonly status: MessageStatus; readonly ack: number; readonly previousStatus: MessageStatus }
  "message.failed": AboutMessage & { readonly error: { readonly code: string; readonly message: string } | null }
  /** `emoji` is `""` when a reaction was taken back. */
  "message.reaction": AboutMessage & { readonly emoji: string; readonly from: string }
  "message.revoked": AboutMessage & { readonly by: string }
  "message.edited": AboutMessage & { readonly text: string; readonly previousText: string | null; readonly by: string }
  "poll.vote": AboutMessage & { readonly voter: string; readonly options: ReadonlyArray<string> }
  "presence.update": { readonly chatId: string; readonly state: PresenceState; readonly lastSeen: string | null }
  "group.join": GroupEventData
  "group.leave": GroupEventData
  "group.update": GroupEventData
  "group.participants": GroupEventData
  /** A label changed or was deleted, or was put on or taken off a chat. */
  "label.update":
    | { readonly kind: "label"; readonly label: Label; readonly deleted: boolean }
    | { readonly kind: "association"; readonly chatId: string; readonly labelId: string; readonly added: boolean }
  /** Only the fields that changed; `deleted: true` when the chat was removed. */
  "chat.update": { readonly chatId: string; readonly changes: ChatChanges }
  "contact.update": { readonly chatId: string; readonly changes: ContactChanges }
  /** A contact's status update (story). */
  "status.received": { readonly message: Message }
  "call.received": { readonly call: Call }
  "call.update": { readonly callId: string; readonly status: CallStatus }
  /** A chunk of the history the phone sent on linking (or on request) was stored. */
  "session.history": { readonly chats: number; readonly messages: number; readonly progress: number | null }
  "group.request": {
    readonly groupId: string
    readonly participants: ReadonlyArray<string>
    readonly action: JoinRequestAction
    readonly by: string | null
  }
  /**
   * The session reconnected more than 5 times within `window` seconds (600): announced once
   * as it crosses the line (again only after it fell back under it); its `lastError` says
   * `UNSTABLE` meanwhile. `reason`: the code of the disconnect that crossed it.
   */
  "session.unstable": { readonly reconnects: number; readonly window: number; readonly reason: string }
  "webhook.test": { readonly webhookId: string; readonly message: string }
}>

type Complete<Catalog extends { readonly [K in EventKind]: unknown } & { readonly [K in Exclude<keyof Catalog, EventKind>]: never }> =
  Catalog

/** One kind's event: the envelope with that kind's `data`. */
export type DomainEventOf<K extends EventKind> = K extends EventKind ? {
    readonly id: string
    readonly event: K
    readonly sessionId: string
    readonly timestamp: string
    readonly data: EventData[K]
  }
  : never

/** Any event of the catalog; `event` tells which, and narrows `data`. */
export type DomainEvent = DomainEventOf<EventKind>

/** Whether an event is of one of `kinds`; narrows it, `data` included. */
export const isEventOf = <const K extends EventKind>(...kinds: ReadonlyArray<K>) => (event: DomainEvent): event is DomainEventOf<K> =>
  (kinds as ReadonlyArray<EventKind>).includes(event.event)
