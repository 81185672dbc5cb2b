import { Context, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { AppSettings } from "../layers/Config.js"
import { AuditRepo } from "../layers/store/AuditRepo.js"
import type { Page, PageRequest } from "./Pagination.js"

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

export interface AuditService {
  /** Keeps a record; a Store outage is logged, never passed on to the request it describes. */
  readonly record: (record: AuditRecord) => Effect.Effect<void>
  readonly list: (filter: AuditFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<AuditRecord>>
}

/** The audit log: who did what, from where, with what outcome; kept `AUDIT_RETENTION_DAYS`. */
export class Audit extends Context.Tag("switchboard/Audit")<Audit, AuditService>() {
  static readonly layer = Layer.scoped(
    Audit,
    Effect.gen(function*() {
      const repo = yield* AuditRepo
      const { security } = yield* AppSettings
      const prune = Effect.suspend(() =>
        repo.prune(new Date(Date.now() - Duration.toMillis(security.auditRetention)).toISOString())
      ).pipe(
        Effect.tap((removed) => (removed > 0 ? Effect.logInfo(`audit log: removed ${removed} records past retention`) : Effect.void)),
        Effect.catchAll((error) => Effect.logWarning("audit log: pruning failed; will try again", error))
      )
      yield* Effect.forkScoped(Effect.repeat(prune, Schedule.spaced("1 hour")))
      return Audit.of({
        record: (record) => repo.insert(record).pipe(Effect.catchAll((error) => Effect.logError("audit log: a record could not be written", error))),
        list: (filter, page) => Effect.orDie(repo.list(filter, page))
      })
    })
  )
}
