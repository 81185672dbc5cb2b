import { Schema } from "effect"
import { PersonIdFromInput } from "./Ids.js"
import { MediaSourceJson } from "./Message.js"

/**
 * Status updates (stories): messages to `status@broadcast`, shown to the account's contacts for
 * 24 hours. `contacts` names who may see one; without it, every contact the session knows.
 */
const audience = Schema.optional(
  Schema.Array(PersonIdFromInput).pipe(
    Schema.minItems(1, { message: () => "contacts must name at least one contact (or be left out: every known contact)" }),
    Schema.maxItems(10_000, { message: () => "at most 10000 contacts" })
  )
)

/** How long status updates are shown. */
export const STATUS_LIFETIME_MS = 24 * 60 * 60 * 1000

export const TextStatusRequest = Schema.Struct({
  text: Schema.String.pipe(
    Schema.minLength(1, { message: () => "text must not be empty" }),
    Schema.maxLength(700, { message: () => "text must be at most 700 characters" })
  ),
  backgroundColor: Schema.optional(Schema.String.pipe(
    Schema.pattern(/^#[0-9a-fA-F]{6}$/, { message: () => "backgroundColor must be #RRGGBB" })
  )),
  font: Schema.optional(Schema.Int.pipe(Schema.between(0, 9, { message: () => "font must be 0 to 9" }))),
  contacts: audience
}).annotations({ identifier: "TextStatusRequest" })
export type TextStatusRequest = typeof TextStatusRequest.Type

/** An image or video status: media as in send-image (JSON here; multipart with a `file` part too). */
export const MediaStatusRequest = Schema.Struct({
  media: MediaSourceJson,
  caption: Schema.optional(Schema.String.pipe(Schema.maxLength(700, { message: () => "caption must be at most 700 characters" }))),
  contacts: audience
}).annotations({ identifier: "MediaStatusRequest" })
export type MediaStatusRequest = typeof MediaStatusRequest.Type
