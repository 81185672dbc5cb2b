import { Schema } from "effect"
import { Label } from "./Label.js"
import { Message } from "./Message.js"

/** What kind of conversation a chat is, from its id: `…@c.us`/`…@lid`, `…@g.us`, `…@newsletter`. */
export const ChatType = Schema.Literal("person", "group", "channel")
export type ChatType = typeof ChatType.Type

export const chatTypeOf = (chatId: string): ChatType =>
  chatId.endsWith("@g.us") ? "group" : chatId.endsWith("@newsletter") ? "channel" : "person"

/** The pseudo-chat WhatsApp carries status updates (stories) in; it is never a chat of the list. */
export const STATUS_CHAT_ID = "status@broadcast"

/**
 * A conversation of the account, as its chat list shows it. Kept current from every message in
 * or out, reads (through the API and on the phone) and the engine's chat events.
 */
export class Chat extends Schema.Class<Chat>("Chat")({
  chatId: Schema.String,
  name: Schema.NullOr(Schema.String),
  type: ChatType,
  lastMessage: Schema.NullOr(Message),
  unreadCount: Schema.Number.annotations({ description: "received messages not read yet; -1: marked unread with no count" }),
  archived: Schema.Boolean,
  pinned: Schema.Boolean,
  mutedUntil: Schema.NullOr(Schema.String),
  labels: Schema.Array(Label),
  updatedAt: Schema.String.annotations({ description: "the chat's last activity (its newest message, or the last change)" })
}) {}

const flag = Schema.Literal("true", "false").pipe(
  Schema.transform(Schema.Boolean, { strict: true, decode: (text) => text === "true", encode: (value) => value ? "true" : "false" })
)

/** `GET …/chats` filters, beside `page`/`limit`. */
export const ChatListFilter = Schema.Struct({
  archived: Schema.optional(flag),
  unread: Schema.optional(flag.annotations({ description: "true: only chats with unread messages" })),
  type: Schema.optional(ChatType),
  labelId: Schema.optional(Schema.String)
})
export type ChatListFilter = typeof ChatListFilter.Type

export const ArchiveChatRequest = Schema.Struct({ archived: Schema.Boolean })
export const PinChatRequest = Schema.Struct({ pinned: Schema.Boolean })

/**
 * The date as written names a day of the calendar: `Date.parse` rolls 2026-02-31 over to
 * 3 March, which would mute until a moment nobody asked for.
 */
const isCalendarDate = (text: string) => {
  const [year, month, day] = text.slice(0, 10).split("-").map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

const isoMoment = Schema.String.pipe(
  Schema.filter((text) => /^\d{4}-\d{2}-\d{2}T/.test(text) && isCalendarDate(text) && !Number.isNaN(Date.parse(text)), {
    message: () => "until must be an ISO-8601 date-time, e.g. 2026-12-01T09:00:00Z"
  })
)

/** Mute until a moment (`null` unmutes), or for some hours from now. */
export const MuteChatRequest = Schema.Union(
  Schema.Struct({
    until: Schema.NullOr(isoMoment).annotations({ description: "ISO-8601; null unmutes" })
  }),
  Schema.Struct({
    hours: Schema.Number.pipe(
      Schema.greaterThan(0, { message: () => "hours must be more than 0" }),
      Schema.lessThanOrEqualTo(24 * 365 * 10, { message: () => "hours must be at most 87600 (10 years)" })
    )
  })
).annotations({ identifier: "MuteChatRequest" })
export type MuteChatRequest = typeof MuteChatRequest.Type

export const HistoryRequest = Schema.Struct({
  count: Schema.Int.pipe(Schema.between(1, 500, { message: () => "count must be 1 to 500" }))
})

/** `POST …/chats/{chatId}/history` is asked of the phone; what it sends arrives later as history. */
export const HistoryRequested = Schema.Struct({ chatId: Schema.String, count: Schema.Number, requested: Schema.Boolean })

/** A change to a chat as `chat.update` announces it: only the fields that changed. */
export const ChatChanges = Schema.Struct({
  name: Schema.optional(Schema.NullOr(Schema.String)),
  unreadCount: Schema.optional(Schema.Number),
  archived: Schema.optional(Schema.Boolean),
  pinned: Schema.optional(Schema.Boolean),
  mutedUntil: Schema.optional(Schema.NullOr(Schema.String)),
  deleted: Schema.optional(Schema.Boolean)
})
export type ChatChanges = typeof ChatChanges.Type
