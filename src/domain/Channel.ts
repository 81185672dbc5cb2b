import { Schema } from "effect"
import { ChannelId } from "./Ids.js"

export const ChannelRole = Schema.Literal("owner", "admin", "subscriber", "guest")
export type ChannelRole = typeof ChannelRole.Type

export const Channel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  inviteCode: Schema.NullOr(Schema.String),
  subscribers: Schema.NullOr(Schema.Number),
  /** This session's relation to the channel. */
  role: ChannelRole,
  createdAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Channel" })
export type Channel = typeof Channel.Type

export const CreateChannelRequest = Schema.Struct({
  name: Schema.String.pipe(
    Schema.minLength(1, { message: () => "name must not be empty" }),
    Schema.maxLength(100, { message: () => "name must be at most 100 characters" })
  ),
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(2048)))
})
export type CreateChannelRequest = typeof CreateChannelRequest.Type

/** Follow a channel by its id, or by the code of its invite link (whatsapp.com/channel/<code>). */
export const SubscribeRequest = Schema.Union(
  Schema.Struct({ channelId: ChannelId }),
  Schema.Struct({
    inviteCode: Schema.String.pipe(
      Schema.transform(Schema.String, {
        strict: true,
        decode: (input) => input.trim().replace(/^https?:\/\/(www\.)?whatsapp\.com\/channel\//, ""),
        encode: (code) => code
      }),
      Schema.pattern(/^[0-9A-Za-z]{6,64}$/, { message: () => "an invite code (or https://whatsapp.com/channel/<code>)" })
    )
  })
)
export type SubscribeRequest = typeof SubscribeRequest.Type

export const ChannelMessage = Schema.Struct({
  id: Schema.String,
  channelId: Schema.String,
  type: Schema.String,
  text: Schema.NullOr(Schema.String),
  timestamp: Schema.String
}).annotations({ identifier: "ChannelMessage" })
export type ChannelMessage = typeof ChannelMessage.Type
