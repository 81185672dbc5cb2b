import { Context, type Effect, type Option } from "effect"
import type { AuditFilter, AuditRecord } from "../../../domain/Audit.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

export class AuditRepo extends Context.Tag("switchboard/AuditRepo")<AuditRepo, {
  /** Writes the records, in one statement for up to a few hundred. */
  readonly insert: (records: ReadonlyArray<AuditRecord>) => Effect.Effect<void, StoreUnavailable>
  readonly list: (filter: AuditFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<AuditRecord>, StoreUnavailable>
  readonly prune: (before: string) => Effect.Effect<number, StoreUnavailable>
}>() {}
