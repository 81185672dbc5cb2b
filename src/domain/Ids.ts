import { randomBytes } from "node:crypto"
import { ParseResult, Schema } from "effect"

// The last millisecond used and the counter within it: ids minted in the same millisecond
// must still sort in the order they were made (lists order by id after time). Per process,
// like the clock it extends.
let lastMillis = 0
let counter = 0

/**
 * A UUID v7 (RFC 9562): time-ordered, and monotonic within the process: the 12-bit `rand_a`
 * field counts up within a millisecond (§6.2, method 1), so ids sort by creation.
 */
export const uuidv7 = (now: number = Date.now()): string => {
  if (now > lastMillis) {
    lastMillis = now
    counter = randomBytes(2).readUInt16BE(0) & 0x07ff // start low enough to leave room to count
  } else if (++counter > 0x0fff) {
    lastMillis += 1 // a full millisecond's worth: borrow the next one rather than repeat
    counter = 0
  }
  const bytes = randomBytes(16)
  bytes.writeUIntBE(lastMillis, 0, 6)
  bytes[6] = 0x70 | (counter >> 8)
  bytes[7] = counter & 0xff
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

export const SessionId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64), Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

export const MessageId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128), Schema.brand("MessageId"))
export type MessageId = typeof MessageId.Type

/**
 * A chat address in the API's form: `<digits>@c.us`, `<id>@g.us`, `<id>@newsletter` or `<id>@lid`.
 * Engines translate to their own wire forms at their boundary.
 */
export const ChatId = Schema.String.pipe(
  Schema.pattern(/^[0-9A-Za-z.:_-]{1,64}@(c\.us|g\.us|newsletter|lid)$/),
  Schema.brand("ChatId")
)
export type ChatId = typeof ChatId.Type

/** A phone number as people type it: optional `+`, then 6–15 digits (E.164 allows 15). */
export const phoneNumberPattern = /^\+?(\d{6,15})$/

/**
 * Accepts what people type for a person (`+15551234567`, `15551234567`) as well as full ids,
 * and normalises to a `ChatId`.
 */
export const ChatIdFromInput = Schema.transformOrFail(
  Schema.String.annotations({
    description: "A chat id (`15551234567@c.us`, `…@g.us`, `…@newsletter`, `…@lid`) or a phone number (`+15551234567`)",
    examples: ["15551234567@c.us", "+15551234567"]
  }),
  ChatId,
  {
    strict: true,
    decode: (input, _, ast) => {
      const chatId = normaliseChatId(input)
      return chatId === null
        ? ParseResult.fail(new ParseResult.Type(ast, input, `"${input}" is not a chat id (digits@c.us, id@g.us, id@newsletter, id@lid) or a phone number`))
        : ParseResult.succeed(chatId)
    },
    encode: ParseResult.succeed
  }
)

export const normaliseChatId = (input: string): ChatId | null => {
  const trimmed = input.trim()
  const phone = phoneNumberPattern.exec(trimmed)
  const candidate = phone ? `${phone[1]}@c.us` : trimmed
  return isChatId(candidate) ? candidate : null
}
const isChatId = Schema.is(ChatId)

/** The phone digits of a person's chat id, if it is one. */
export const phoneOfChatId = (chatId: string): string | null => {
  const match = /^(\d+)@c\.us$/.exec(chatId)
  return match ? match[1]! : null
}

/** A group's id, `<digits>-<digits>@g.us` or `<digits>@g.us`, as the API shows it. */
export const GroupId = Schema.String.pipe(
  Schema.pattern(/^[0-9-]{1,64}@g\.us$/, { message: () => "a group id looks like 120363012345678901@g.us" })
)

/** A channel's id, `<digits>@newsletter`. */
export const ChannelId = Schema.String.pipe(
  Schema.pattern(/^[0-9]{1,64}@newsletter$/, { message: () => "a channel id looks like 120363012345678901@newsletter" })
)

/** A person: a phone number (normalised to `…@c.us`) or a `…@lid` privacy id. */
export const PersonIdFromInput = ChatIdFromInput.pipe(
  Schema.filter((id) => id.endsWith("@c.us") || id.endsWith("@lid"), {
    message: () => "a participant is a phone number (…@c.us) or a privacy id (…@lid)"
  })
)
