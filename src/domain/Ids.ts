import { Data, Either, ParseResult, Schema } from "effect"

export const SessionId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64), Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

export const MessageId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128), Schema.brand("MessageId"))
export type MessageId = typeof MessageId.Type

/**
 * A chat address in the API's form: `<digits>@c.us`, `<id>@g.us`, `<id>@newsletter` or `<id>@lid`.
 * Engines translate to their own wire forms at their boundary.
 */
const ChatIdSchema = Schema.String.pipe(
  Schema.pattern(/^[0-9A-Za-z.:_-]{1,64}@(c\.us|g\.us|newsletter|lid)$/),
  Schema.brand("ChatId")
)

/** Text that is neither a chat id nor a phone number. */
export class InvalidChatId extends Data.TaggedError("InvalidChatId")<{ readonly input: string }> {
  override get message() {
    return `"${this.input}" is not a chat id (digits@c.us, id@g.us, id@newsletter, id@lid) or a phone number`
  }
}

/**
 * The schema, and constructors that take what people type: `ChatId.make("+1 (555) 000-1234")`
 * is `15550001234@c.us` (and throws `InvalidChatId` on garbage); `ChatId.parse` answers an
 * `Either`, which `yield*` turns into a typed failure. A program's own input, so written
 * numbers are taken (`phoneNumberAsTyped`); the REST API takes digits only (API.md).
 */
export const ChatId = Object.assign(ChatIdSchema, {
  parse: (input: string): Either.Either<ChatId, InvalidChatId> => {
    const chatId = normaliseChatId(phoneNumberAsTyped(input.trim()))
    return chatId === null ? Either.left(new InvalidChatId({ input })) : Either.right(chatId)
  },
  make: (input: string): ChatId => Either.getOrThrowWith(ChatId.parse(input), (error) => error)
})
export type ChatId = typeof ChatIdSchema.Type

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
        ? ParseResult.fail(new ParseResult.Type(ast, input, new InvalidChatId({ input }).message))
        : ParseResult.succeed(chatId)
    },
    encode: ParseResult.succeed
  }
)

/**
 * A phone number as it is written for people (`+1 555 000 1234`, `+1 (555) 000-1234`,
 * `030.1234.5678`): digit groups with at most one space, dot or dash between two, at most one
 * group in parentheses, never a trunk `(0)` (`+44 (0)20…` would dial another number).
 */
const writtenPhoneNumber = /^\+?\d+(?:[ .-]?\d+)*$/
const parenthesisedGroup = /\((\d{1,4})\)/

/** The digits (and `+`) of a written phone number; anything else is handed on untouched. */
const phoneNumberAsTyped = (input: string): string => {
  if (/\(0+\)/.test(input)) return input
  const unwrapped = input.replace(parenthesisedGroup, "$1")
  return writtenPhoneNumber.test(unwrapped) ? unwrapped.replace(/[ .-]/g, "") : input
}

/** A chat id, or a phone number as digits with an optional `+`: what the REST API takes. */
export const normaliseChatId = (input: string): ChatId | null => {
  const trimmed = input.trim()
  const phone = phoneNumberPattern.exec(trimmed)
  const candidate = phone ? `${phone[1]}@c.us` : trimmed
  return isChatId(candidate) ? candidate : null
}
const isChatId = Schema.is(ChatIdSchema)

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
