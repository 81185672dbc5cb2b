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

/** The media kinds WhatsApp carries; each has its own send endpoint. */
export const MediaKind = Schema.Literal("image", "video", "audio", "document")
export type MediaKind = typeof MediaKind.Type

export const StatusChange = Schema.Struct({ status: MessageStatus, at: Schema.String })

export const MessageError = Schema.Struct({ code: Schema.String, message: Schema.String })

export const MessageMedia = Schema.Struct({
  mimetype: Schema.String,
  filename: Schema.NullOr(Schema.String),
  size: Schema.NullOr(Schema.Number).annotations({ description: "bytes; null when an incoming message did not say and it was not stored" }),
  ptt: Schema.Boolean.annotations({ description: "an audio sent or received as a voice note" })
})
export type MessageMedia = typeof MessageMedia.Type

export const Reaction = Schema.Struct({ emoji: Schema.String, from: Schema.String, at: Schema.String })
export type Reaction = typeof Reaction.Type

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
  media: Schema.NullOr(MessageMedia),
  status: MessageStatus,
  ack: Schema.Number,
  error: Schema.NullOr(MessageError),
  timestamp: Schema.String,
  quotedMessageId: Schema.NullOr(Schema.String),
  batchId: Schema.NullOr(Schema.String),
  reactions: Schema.Array(Reaction),
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

/**
 * Where the bytes of a media send come from: a URL the gateway fetches, or the bytes
 * themselves (base64 in JSON, or a multipart file). `mimetype`/`filename` are what the caller
 * declares; the type is sniffed from the bytes and checked against the endpoint all the same.
 */
export type MediaSource =
  | { readonly url: string }
  | { readonly data: Uint8Array; readonly mimetype?: string | undefined; readonly filename?: string | undefined }

/** A media send, decoded from JSON or multipart by the HTTP layer (or built by an embedding app). */
export interface SendMediaInput {
  readonly chatId: string
  readonly kind: MediaKind
  readonly source: MediaSource
  readonly caption?: string | undefined
  /** The name the recipient sees (documents); defaults to the uploaded file's name. */
  readonly filename?: string | undefined
  /** Audio only: send as a voice note. */
  readonly ptt?: boolean | undefined
  readonly quotedMessageId?: string | undefined
  readonly mentions?: ReadonlyArray<string> | undefined
}

/** Media as accepted: the bytes, and what they were found to be. */
export interface AcceptedMedia {
  readonly data: Uint8Array
  readonly mimetype: string
  readonly filename: string | null
}

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" })
const emojiLike = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u

/** One emoji (a single grapheme, however many code points: skin tones, ZWJ families, flags). */
const isSingleEmoji = (text: string) => {
  const [first, second] = graphemes.segment(text)
  return first !== undefined && second === undefined && emojiLike.test(text)
}

export const ReactRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  messageId: Schema.String,
  emoji: Schema.String.pipe(
    Schema.maxLength(64),
    Schema.filter((text) => text === "" || isSingleEmoji(text), {
      message: () => "emoji must be a single emoji, or \"\" to take the reaction back"
    })
  )
})
export type ReactRequest = typeof ReactRequest.Type

export const ReactResult = Schema.Struct({ messageId: Schema.String, chatId: Schema.String, emoji: Schema.String })

export const SendResult = Schema.Struct({
  messageId: MessageId,
  chatId: Schema.String,
  status: MessageStatus,
  timestamp: Schema.String
})
export type SendResult = typeof SendResult.Type

const filename = Schema.String.pipe(Schema.maxLength(255, { message: () => "filename must be at most 255 characters" }))

/** Media in a JSON body: a URL for the gateway to fetch, or the bytes in base64. */
export const MediaSourceJson = Schema.Union(
  Schema.Struct({ url: Schema.String }),
  Schema.Struct({
    data: Schema.Uint8ArrayFromBase64.annotations({ description: "the file, base64-encoded" }),
    mimetype: Schema.optional(Schema.String),
    filename: Schema.optional(filename)
  })
)

/** The fields of a media send (JSON body, or one item of a bulk send). */
export const SendMediaRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  media: MediaSourceJson,
  caption: Schema.optional(
    Schema.String.pipe(Schema.maxLength(4096, { message: () => "caption must be at most 4096 characters" }))
  ),
  filename: Schema.optional(filename),
  ptt: Schema.optional(Schema.Boolean.annotations({ description: "audio: send as a voice note" })),
  quotedMessageId: Schema.optional(Schema.String),
  mentions: Schema.optional(Schema.Array(ChatIdFromInput))
}).annotations({ identifier: "SendMediaRequest" })
export type SendMediaRequest = typeof SendMediaRequest.Type

const mediaItem = <K extends MediaKind>(kind: K) => Schema.Struct({ type: Schema.Literal(kind), ...SendMediaRequest.fields })

/**
 * One message of a bulk send; `type` says which send it is. One member per `type` value, so a
 * refusal speaks only of the send the item asked for.
 */
export const BulkItem = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), ...SendTextRequest.fields }),
  mediaItem("image"),
  mediaItem("video"),
  mediaItem("audio"),
  mediaItem("document")
)
export type BulkItem = typeof BulkItem.Type

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
