import { Schema } from "effect"

/**
 * How much of the account's past the phone's history sync brings in on linking: nothing, what
 * the phone sends by default (recent chats), or everything it offers.
 */
export const HistorySync = Schema.Literal("off", "recent", "full")
export type HistorySync = typeof HistorySync.Type

/** Per-session behaviour, kept with the session. */
export const SessionSettings = Schema.Struct({
  rejectCalls: Schema.Boolean.annotations({ description: "reject incoming calls at once" }),
  rejectCallMessage: Schema.NullOr(Schema.String.pipe(Schema.maxLength(4096))).annotations({
    description: "with rejectCalls: this text is sent to the caller"
  }),
  readReceipts: Schema.Boolean.annotations({
    description: "reading through the API sends read receipts (blue ticks); false: chats are marked read here only"
  }),
  markOnlineOnConnect: Schema.Boolean.annotations({
    description: "show the account online when the session connects (the phone then stops notifying)"
  }),
  historySync: HistorySync
}).annotations({ identifier: "SessionSettings" })
export type SessionSettings = typeof SessionSettings.Type

/** `PUT …/settings`: the fields to change; the others keep their values. */
export const UpdateSessionSettingsRequest = Schema.partial(SessionSettings).annotations({ identifier: "UpdateSessionSettingsRequest" })
export type UpdateSessionSettingsRequest = typeof UpdateSessionSettingsRequest.Type

/** A session's settings as kept (null: created before settings existed, so the defaults). */
export const settingsOrDefault = (kept: SessionSettings | null): SessionSettings => kept ?? defaultSessionSettings("recent")

export const defaultSessionSettings = (historySync: HistorySync): SessionSettings => ({
  rejectCalls: false,
  rejectCallMessage: null,
  readReceipts: true,
  markOnlineOnConnect: false,
  historySync
})
