import { Schema } from "effect"

/**
 * A call to the account: offered (ringing), then accepted (on another device), rejected (by the
 * gateway, or the phone), timed out, or missed (the caller hung up first).
 */
export const CallStatus = Schema.Literal("offer", "accept", "reject", "timeout", "missed")
export type CallStatus = typeof CallStatus.Type

export const Call = Schema.Struct({
  callId: Schema.String,
  from: Schema.String,
  isVideo: Schema.Boolean,
  isGroup: Schema.Boolean,
  status: CallStatus,
  at: Schema.String.annotations({ description: "when the call was offered" })
}).annotations({ identifier: "Call" })
export type Call = typeof Call.Type

/** Sandbox only: ring a session, from a phone number (or id) or another sandbox session. */
export const IncomingCallRequest = Schema.Struct({
  from: Schema.String.pipe(Schema.minLength(1, { message: () => "from must name a number, a chat id or a sandbox session" })),
  isVideo: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "IncomingCallRequest" })
