import { Schema } from "effect"
import { ChatIdFromInput, MessageId, SessionId } from "./Ids.js"

export const MessageStatus = Schema.Literal("pending", "sent", "delivered", "read", "played", "failed")
export type MessageStatus = typeof MessageStatus.Type

/** WhatsApp's numeric ack for each status (`-1` is an error). */
export const ackOf: Record<MessageStatus, number> = {
  failed: -1,
  pending: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  played: 4
}

/** Statuses only move forward: a late `delivered` never overwrites `read`. */
export const isStatusAdvance = (from: MessageStatus, to: MessageStatus) =>
  from !== "failed" && to !== from && (to === "failed" ? from === "pending" : ackOf[to] > ackOf[from])

export const MessageType = Schema.Literal("text", "image", "video", "audio", "document", "reaction", "unknown")
export type MessageType = typeof MessageType.Type

export const StatusChange = Schema.Struct({ status: MessageStatus, at: Schema.String })

export const MessageError = Schema.Struct({ code: Schema.String, message: Schema.String })

export class Message extends Schema.Class<Message>("Message")({
  id: MessageId,
  sessionId: SessionId,
  chatId: Schema.String,
  from: Schema.String,
  to: Schema.String,
  fromMe: Schema.Boolean,
  type: MessageType,
  text: Schema.NullOr(Schema.String),
  caption: Schema.NullOr(Schema.String),
  media: Schema.NullOr(Schema.Struct({ mimetype: Schema.String, filename: Schema.NullOr(Schema.String), size: Schema.Number })),
  status: MessageStatus,
  ack: Schema.Number,
  error: Schema.NullOr(MessageError),
  timestamp: Schema.String,
  quotedMessageId: Schema.NullOr(Schema.String),
  batchId: Schema.NullOr(Schema.String),
  reactions: Schema.Array(Schema.Struct({ emoji: Schema.String, from: Schema.String, at: Schema.String })),
  statusHistory: Schema.Array(StatusChange)
}) {}

export const SendTextRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  text: Schema.String.pipe(
    Schema.minLength(1, { message: () => "text must not be empty" }),
    Schema.maxLength(65_536, { message: () => "text must be at most 65536 characters" })
  ),
  quotedMessageId: Schema.optional(Schema.String),
  mentions: Schema.optional(Schema.Array(ChatIdFromInput))
})
export type SendTextRequest = typeof SendTextRequest.Type

export const SendResult = Schema.Struct({
  messageId: MessageId,
  chatId: Schema.String,
  status: MessageStatus,
  timestamp: Schema.String
})
export type SendResult = typeof SendResult.Type

/** One message of a bulk send; `type` says which send it is (media types come with media). */
export const BulkItem = Schema.Struct({
  type: Schema.Literal("text"),
  ...SendTextRequest.fields
})

export const SendBulkRequest = Schema.Struct({
  messages: Schema.Array(BulkItem).pipe(
    Schema.minItems(1, { message: () => "a bulk send holds 1 to 100 messages" }),
    Schema.maxItems(100, { message: () => "a bulk send holds 1 to 100 messages" })
  )
})
export type SendBulkRequest = typeof SendBulkRequest.Type

export const BatchAccepted = Schema.Struct({ batchId: Schema.String, total: Schema.Number })

export const BatchStatus = Schema.Literal("queued", "running", "completed", "cancelled")

export const Batch = Schema.Struct({
  batchId: Schema.String,
  status: BatchStatus,
  total: Schema.Number,
  sent: Schema.Number.annotations({ description: "messages the network took (sent, delivered, read or played)" }),
  failed: Schema.Number,
  pending: Schema.Number,
  items: Schema.Array(Schema.Struct({
    messageId: Schema.String,
    chatId: Schema.String,
    status: MessageStatus,
    error: Schema.NullOr(MessageError)
  }))
})
export type Batch = typeof Batch.Type

export const MarkReadRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  messageIds: Schema.optional(Schema.Array(Schema.String).pipe(Schema.maxItems(1000)))
})
export type MarkReadRequest = typeof MarkReadRequest.Type

export const MarkReadResult = Schema.Struct({ chatId: Schema.String, read: Schema.Number })

export const MessageDirection = Schema.Literal("in", "out")

export interface MessageFilter {
  readonly chatId?: string | undefined
  readonly direction?: "in" | "out" | undefined
  readonly status?: MessageStatus | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
}
