import type { StoreUnavailable } from "../domain/Errors.js"
import { Clock, Context, Duration, Effect, Layer, type Option, Schedule } from "effect"
import { AppSettings } from "../domain/Settings.js"
import { AuditRepo } from "../runtime/ports/store/AuditRepo.js"
import { GroupCommit } from "../runtime/ports/store/GroupCommit.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import type { AuditFilter, AuditRecord } from "../domain/Audit.js"

export interface AuditService {
  /** Keeps a record; a Store outage is logged, never passed on to the request it describes. */
  readonly record: (record: AuditRecord) => Effect.Effect<void>
  readonly list: (filter: AuditFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<AuditRecord>, StoreUnavailable>
}

/** The audit log: who did what, from where, with what outcome; kept `AUDIT_RETENTION_DAYS`. */
export class Audit extends Context.Tag("switchboard/Audit")<Audit, AuditService>() {
  static readonly layer = Layer.scoped(
    Audit,
    Effect.gen(function*() {
      const repo = yield* AuditRepo
      const groupCommit = yield* GroupCommit
      const { security } = yield* AppSettings
      const prune = Clock.currentTimeMillis.pipe(
        Effect.flatMap((now) => repo.prune(new Date(now - Duration.toMillis(security.auditRetention)).toISOString())),
        Effect.tap((removed) => (removed > 0 ? Effect.logInfo(`audit log: removed ${removed} records past retention`) : Effect.void)),
        Effect.catchAll((error) => Effect.logWarning("audit log: pruning failed; will try again", error))
      )
      yield* Effect.forkScoped(Effect.repeat(prune, Schedule.spaced("1 hour")))
      return Audit.of({
        // One of the hot path's writes (every send is audited): it shares a commit with the
        // others, and makes no span of its own (a span costs more than the write).
        record: (record) =>
          groupCommit.write(repo.insert(record)).pipe(Effect.catchAll((error) => Effect.logError("audit log: a record could not be written", error))),
        list: Effect.fn("Audit.list")((filter, page) => repo.list(filter, page))
      })
    })
  )
}
