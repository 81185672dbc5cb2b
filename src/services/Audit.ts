import type { StoreUnavailable } from "../domain/Errors.js"
import { Chunk, Clock, Context, Duration, Effect, Layer, type Option, Queue, Schedule } from "effect"
import { AppSettings } from "../domain/Settings.js"
import { AuditRepo } from "../runtime/ports/store/AuditRepo.js"
import { GroupCommit } from "../runtime/ports/store/GroupCommit.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import type { AuditFilter, AuditRecord } from "../domain/Audit.js"

/** The most records one write takes. */
const MAX_BATCH = 512

export interface AuditService {
  /**
   * Keeps a record: written with the next batch, without waiting for it. A Store outage is
   * logged, never passed on to the request it describes.
   */
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

      // One of the hot path's writes (every send is audited). The request does not wait for it:
      // records wait in a queue, and one fiber writes whatever came while its last write was on
      // its way, as one statement in a group commit shared with the other writes (issue 19: a
      // write per request, awaited, cost ~0.1 ms of a send's CPU). The gateway's own server has
      // the answer out before the record is made; an answer made at the edge (403
      // IP_NOT_ALLOWED, 503 while draining) or by the API mounted in an embedder's server goes
      // out without waiting for it, so a kill -9 right then loses the record (a graceful stop
      // writes it).
      const waiting = yield* Queue.unbounded<AuditRecord>()
      const writeAlone = (record: AuditRecord) =>
        groupCommit.write(repo.insert([record])).pipe(
          Effect.catchAll((error) => Effect.logError(`audit log: a record could not be written (${record.action})`, error))
        )
      // A batch refused (one record the Store will not take) is written record by record: only
      // that one is lost, not its batch-mates.
      const write = (records: Chunk.Chunk<AuditRecord>) =>
        records.length === 1
          ? writeAlone(Chunk.unsafeHead(records))
          : groupCommit.write(repo.insert(Chunk.toReadonlyArray(records))).pipe(
            Effect.catchAll(() => Effect.forEach(records, writeAlone, { discard: true }))
          )
      // At shutdown, once the writer's write in flight is done (the writer stops first): the rest.
      yield* Effect.addFinalizer(() => Effect.flatMap(Queue.takeAll(waiting), (rest) => Chunk.isEmpty(rest) ? Effect.void : write(rest)))
      yield* Effect.forkScoped(Effect.forever(
        Effect.uninterruptibleMask((restore) => Effect.flatMap(restore(Queue.takeBetween(waiting, 1, MAX_BATCH)), write))
      ))

      return Audit.of({
        record: (record) => Queue.offer(waiting, record),
        list: Effect.fn("Audit.list")((filter, page) => repo.list(filter, page))
      })
    })
  )
}
