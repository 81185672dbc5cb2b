import { Schema } from "effect"
import { MediaSourceJson } from "./Message.js"

/** The session's own WhatsApp profile. */
export const Profile = Schema.Struct({
  name: Schema.NullOr(Schema.String).annotations({ description: "the push name others see" }),
  about: Schema.NullOr(Schema.String),
  picture: Schema.NullOr(Schema.String).annotations({ description: "a URL of the picture, or null when there is none" })
}).annotations({ identifier: "Profile" })
export type Profile = typeof Profile.Type

export const ProfileNameRequest = Schema.Struct({
  name: Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "name must not be empty" }),
    Schema.maxLength(25, { message: () => "name must be at most 25 characters" })
  )
})

export const ProfileAboutRequest = Schema.Struct({
  about: Schema.String.pipe(Schema.maxLength(139, { message: () => "about must be at most 139 characters" }))
})

/**
 * A new picture (the profile's or a group's) as JSON; multipart with a `file` part works too.
 * Any JPEG, PNG or WebP: it is cropped to a centred square and scaled to WhatsApp's 640×640 JPEG.
 */
export const PictureRequest = Schema.Struct({ media: MediaSourceJson }).annotations({ identifier: "PictureRequest" })

/** WhatsApp's profile and group pictures: a square JPEG this many pixels wide. */
export const PICTURE_SIZE = 640
