import { HttpApiSchema, Multipart } from "@effect/platform"
import { Schema } from "effect"
import { ChatIdFromInput } from "../domain/Ids.js"
import { SendMediaRequest } from "../domain/Message.js"
import { PictureRequest } from "../domain/Profile.js"
import { MediaStatusRequest } from "../domain/Status.js"

/**
 * The bodies of the endpoints that take media, as the contract declares them: JSON, or
 * multipart/form-data with a `file` part. Apart from their readers (`mediaRequest.ts`, which
 * need Node's multipart parser), so that a client of the contract loads none of the server.
 */

/** The multipart form: a `file` part, and the other fields as text. */
export const MediaForm = Schema.Struct({
  chatId: ChatIdFromInput,
  file: Multipart.SingleFileSchema,
  caption: SendMediaRequest.fields.caption,
  filename: SendMediaRequest.fields.filename,
  quotedMessageId: SendMediaRequest.fields.quotedMessageId,
  ptt: Schema.optional(Schema.Literal("true", "false")),
  typingMs: Schema.optional(Schema.Union(
    Schema.Literal("auto"),
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 30_000, { message: () => "typingMs must be 0 to 30000, or \"auto\"" }))
  ))
})

export const SendMediaForm = HttpApiSchema.Multipart(MediaForm)

/** What the contract documents for every media endpoint: either body. */
export const SendMediaPayload = Schema.Union(SendMediaRequest, SendMediaForm)

/**
 * An image or video status update's form: a `file` part, a caption, and `contacts` as one field
 * of comma-separated numbers or chat ids (form fields are text).
 */
export const MediaStatusForm = Schema.Struct({
  file: Multipart.SingleFileSchema,
  caption: MediaStatusRequest.fields.caption,
  contacts: Schema.optional(Schema.compose(
    Schema.split(",").pipe(Schema.compose(Schema.Array(Schema.Trim))),
    MediaStatusRequest.fields.contacts.from
  ))
})

/** What the contract documents for the image and video status endpoints: either body. */
export const MediaStatusPayload = Schema.Union(MediaStatusRequest, HttpApiSchema.Multipart(MediaStatusForm))

export const PictureForm = Schema.Struct({ file: Multipart.SingleFileSchema })

/** What the contract documents for a picture (the profile's or a group's): `{media}` as JSON, or a `file` part. */
export const PicturePayload = Schema.Union(PictureRequest, HttpApiSchema.Multipart(PictureForm))
