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

export const MessageType = Schema.Literal(
  "text",
  "image",
  "video",
  "audio",
  "document",
  "sticker",
  "location",
  "contact",
  "poll",
  "reaction",
  "unknown"
)
export type MessageType = typeof MessageType.Type

/** The media kinds WhatsApp carries; each has its own send endpoint. */
export const MediaKind = Schema.Literal("image", "video", "audio", "document", "sticker")
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

export const Location = Schema.Struct({
  latitude: Schema.Number,
  longitude: Schema.Number,
  name: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Location" })
export type Location = typeof Location.Type

/** A contact card as sent or received: its fields, and the vCard that carried them. */
export const ContactCard = Schema.Struct({
  name: Schema.String,
  phone: Schema.NullOr(Schema.String),
  organization: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  vcard: Schema.String
}).annotations({ identifier: "ContactCard" })
export type ContactCard = typeof ContactCard.Type

/** A poll with its votes: the latest vote of each voter counts; a withdrawn vote counts for nothing. */
export const PollResults = Schema.Struct({
  name: Schema.String,
  selectableCount: Schema.Number.annotations({ description: "how many options a voter may pick (0: any number)" }),
  options: Schema.Array(Schema.Struct({
    name: Schema.String,
    votes: Schema.Number,
    voters: Schema.Array(Schema.String)
  })),
  totalVoters: Schema.Number
}).annotations({ identifier: "PollResults" })
export type PollResults = typeof PollResults.Type

export const LinkPreview = Schema.Struct({
  url: Schema.String,
  title: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  thumbnail: Schema.optional(Schema.String.annotations({ description: "a JPEG, base64-encoded" }))
}).annotations({ identifier: "LinkPreview" })
export type LinkPreview = typeof LinkPreview.Type

/** An earlier text (or caption) of an edited message, and when it was replaced. */
export const Edit = Schema.Struct({ text: Schema.String, at: Schema.String })
export type Edit = typeof Edit.Type

/** How a message came to the gateway: sent or received live, or imported from the phone's history. */
export const MessageSource = Schema.Literal("live", "history")
export type MessageSource = typeof MessageSource.Type

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
  statusHistory: Schema.Array(StatusChange),
  location: Schema.NullOr(Location),
  contacts: Schema.NullOr(Schema.Array(ContactCard)),
  poll: Schema.NullOr(PollResults),
  linkPreview: Schema.NullOr(LinkPreview),
  forwarded: Schema.Boolean,
  editedAt: Schema.NullOr(Schema.String),
  edits: Schema.Array(Edit).annotations({ description: "earlier texts, oldest first" }),
  revoked: Schema.Boolean.annotations({ description: "deleted (for everyone, or for this account only); text and media are gone" }),
  starred: Schema.Boolean,
  pinned: Schema.Boolean,
  source: MessageSource
}) {}

/**
 * How long the session shows "typing…" (or "recording…" before a voice note) before the
 * message goes out: milliseconds, or `auto` (scaled to the text's length: 50 ms a character,
 * at least 1 s, at most 8 s; see runtime/typing.ts).
 */
export const TypingMs = Schema.Union(
  Schema.Int.pipe(Schema.between(0, 30_000, { message: () => "typingMs must be 0 to 30000, or \"auto\"" })),
  Schema.Literal("auto")
).annotations({
  identifier: "TypingMs",
  description: "show typing (recording before a voice note) this many ms before sending; \"auto\": 50 ms a character of the text or caption, 1 to 8 s"
})
export type TypingMs = typeof TypingMs.Type

/** What every send may carry besides its content. */
const sendOptions = {
  quotedMessageId: Schema.optional(Schema.String),
  typingMs: Schema.optional(TypingMs)
}

export const SendTextRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  text: Schema.String.pipe(
    Schema.minLength(1, { message: () => "text must not be empty" }),
    Schema.maxLength(65_536, { message: () => "text must be at most 65536 characters" })
  ),
  mentions: Schema.optional(Schema.Array(ChatIdFromInput)),
  linkPreview: Schema.optional(Schema.Boolean.annotations({
    description: "attach the first URL's title, description and thumbnail (default true)"
  })),
  ...sendOptions
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
  readonly typingMs?: TypingMs | undefined
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
  mentions: Schema.optional(Schema.Array(ChatIdFromInput)),
  ...sendOptions
}).annotations({ identifier: "SendMediaRequest" })

const optionalText = (name: string, max: number) =>
  Schema.optional(Schema.String.pipe(Schema.maxLength(max, { message: () => `${name} must be at most ${max} characters` })))

export const SendLocationRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  latitude: Schema.Number.pipe(Schema.between(-90, 90, { message: () => "latitude must be between -90 and 90" })),
  longitude: Schema.Number.pipe(Schema.between(-180, 180, { message: () => "longitude must be between -180 and 180" })),
  name: optionalText("name", 1024),
  address: optionalText("address", 1024),
  url: optionalText("url", 2048),
  ...sendOptions
}).annotations({ identifier: "SendLocationRequest" })
export type SendLocationRequest = typeof SendLocationRequest.Type

export const ContactInput = Schema.Struct({
  name: Schema.String.pipe(
    Schema.minLength(1, { message: () => "a contact's name must not be empty" }),
    Schema.maxLength(256, { message: () => "a contact's name must be at most 256 characters" })
  ),
  phone: Schema.String.pipe(Schema.pattern(/^\+?[\d\s().-]{6,24}$/, {
    message: () => "a contact's phone is a phone number in international form (+15551234567)"
  })),
  organization: optionalText("organization", 256),
  email: optionalText("email", 256)
}).annotations({ identifier: "ContactInput" })
export type ContactInput = typeof ContactInput.Type

export const SendContactRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  contacts: Schema.Array(ContactInput).pipe(
    Schema.minItems(1, { message: () => "a contact message holds 1 to 20 contacts" }),
    Schema.maxItems(20, { message: () => "a contact message holds 1 to 20 contacts" })
  ),
  ...sendOptions
}).annotations({ identifier: "SendContactRequest" })
export type SendContactRequest = typeof SendContactRequest.Type

const pollOption = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a poll option must not be empty" }),
  Schema.maxLength(100, { message: () => "a poll option must be at most 100 characters" })
)

const pollFields = {
  chatId: ChatIdFromInput,
  name: Schema.String.pipe(
    Schema.minLength(1, { message: () => "a poll's name must not be empty" }),
    Schema.maxLength(255, { message: () => "a poll's name must be at most 255 characters" })
  ),
  options: Schema.Array(pollOption).pipe(
    Schema.minItems(2, { message: () => "a poll has 2 to 12 options" }),
    Schema.maxItems(12, { message: () => "a poll has 2 to 12 options" }),
    Schema.filter((options) => new Set(options).size === options.length, { message: () => "a poll's options must differ" })
  ),
  selectableCount: Schema.optional(Schema.Int.pipe(Schema.positive({ message: () => "selectableCount must be at least 1" }))),
  ...sendOptions
}

const selectableWithinOptions = <A extends { readonly options: ReadonlyArray<string>; readonly selectableCount?: number | undefined }, I>(
  schema: Schema.Schema<A, I>
) =>
  schema.pipe(Schema.filter((poll) => poll.selectableCount === undefined || poll.selectableCount <= poll.options.length, {
    message: () => "selectableCount must not exceed the number of options"
  }))

export const SendPollRequest = selectableWithinOptions(Schema.Struct(pollFields)).annotations({ identifier: "SendPollRequest" })
export type SendPollRequest = typeof SendPollRequest.Type

export const PollVoteRequest = Schema.Struct({
  chatId: ChatIdFromInput,
  messageId: Schema.String,
  options: Schema.Array(Schema.String).pipe(Schema.maxItems(12)).annotations({ description: "the options voted for; [] withdraws the vote" })
}).annotations({ identifier: "PollVoteRequest" })
export type PollVoteRequest = typeof PollVoteRequest.Type

export const PollVoteResult = Schema.Struct({ messageId: Schema.String, chatId: Schema.String, options: Schema.Array(Schema.String) })

export const ForwardRequest = Schema.Struct({ chatId: ChatIdFromInput, typingMs: Schema.optional(TypingMs) })
export type ForwardRequest = typeof ForwardRequest.Type

export const EditRequest = Schema.Struct({
  text: Schema.String.pipe(
    Schema.minLength(1, { message: () => "text must not be empty" }),
    Schema.maxLength(65_536, { message: () => "text must be at most 65536 characters" })
  )
}).annotations({ identifier: "EditRequest" })
export type EditRequest = typeof EditRequest.Type

export const DeleteScope = Schema.Literal("everyone", "me")
export type DeleteScope = typeof DeleteScope.Type

export const StarRequest = Schema.Struct({ starred: Schema.Boolean })
export const PinRequest = Schema.Struct({
  pinned: Schema.Boolean,
  durationHours: Schema.optional(Schema.Literal(24, 168, 720).annotations({ description: "how long the pin lasts (default 168: 7 days)" }))
})
export type PinRequest = typeof PinRequest.Type
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
  mediaItem("document"),
  mediaItem("sticker"),
  Schema.Struct({ type: Schema.Literal("location"), ...SendLocationRequest.fields }),
  Schema.Struct({ type: Schema.Literal("contact"), ...SendContactRequest.fields }),
  selectableWithinOptions(Schema.Struct({ type: Schema.Literal("poll"), ...pollFields }))
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

export const PresenceState = Schema.Literal("online", "offline", "typing", "recording", "paused")
export type PresenceState = typeof PresenceState.Type

export const SetPresenceRequest = Schema.Union(
  Schema.Struct({ state: Schema.Literal("online", "offline") }),
  Schema.Struct({ chatId: ChatIdFromInput, state: Schema.Literal("typing", "recording", "paused") })
).annotations({ identifier: "SetPresenceRequest" })
export type SetPresenceRequest = typeof SetPresenceRequest.Type

export const PresenceSubscribeRequest = Schema.Struct({ chatId: ChatIdFromInput })

/** The last presence heard of a contact (after `POST …/presence/subscribe`). */
export const Presence = Schema.Struct({
  chatId: Schema.String,
  state: PresenceState,
  lastSeen: Schema.NullOr(Schema.String),
  updatedAt: Schema.String
}).annotations({ identifier: "Presence" })
export type Presence = typeof Presence.Type

export const MessageDirection = Schema.Literal("in", "out")

export interface MessageFilter {
  readonly chatId?: string | undefined
  readonly direction?: "in" | "out" | undefined
  readonly status?: MessageStatus | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
}
