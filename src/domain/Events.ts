import { Schema } from "effect"

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
  /** Sent by `POST /api/webhooks/{id}/test` to that webhook only. */
  "webhook.test"
)
export type EventKind = typeof EventKind.Type

/** The envelope every consumer sees (webhook body, SSE data, library stream). */
export const DomainEvent = Schema.Struct({
  id: Schema.String,
  event: EventKind,
  sessionId: Schema.String,
  timestamp: Schema.String,
  data: Schema.Unknown
})
export type DomainEvent = typeof DomainEvent.Type
