import { Schema } from "effect"

/** `success`: done; `denied`: refused for who or where the caller is (401, 403, 429); `failure`: any other refusal or error. */
export const AuditOutcome = Schema.Literal("success", "denied", "failure")

export const AuditRecord = Schema.Struct({
  id: Schema.String,
  at: Schema.String,
  requestId: Schema.String,
  keyId: Schema.NullOr(Schema.String).annotations({ description: "The key used; null when none was valid." }),
  keyName: Schema.NullOr(Schema.String),
  clientIp: Schema.String,
  method: Schema.String,
  action: Schema.String.annotations({ description: "The operation, e.g. sessions.start or apiKeys.create." }),
  target: Schema.String.annotations({ description: "The path called (never its query)." }),
  sessionId: Schema.NullOr(Schema.String),
  outcome: AuditOutcome,
  status: Schema.Number,
  code: Schema.NullOr(Schema.String).annotations({ description: "The error code of a refusal." })
})
export type AuditRecord = typeof AuditRecord.Type

export interface AuditFilter {
  readonly keyId?: string | undefined
  readonly sessionId?: string | undefined
  readonly action?: string | undefined
  readonly outcome?: AuditRecord["outcome"] | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
}
