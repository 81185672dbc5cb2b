import { Context, type Effect } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"

/**
 * Group commit: writes that arrive together share one Store transaction. Each caller's effect
 * runs in the batch's transaction and is answered only once that transaction has committed,
 * so an answered write is on disk (it survives kill -9) exactly as with a transaction of its
 * own; what it queued with `Store.afterCommit` runs after that commit, as it would alone. A
 * write that fails does not take the others down: its batch is rolled back and its members
 * are run again one transaction each, so only the failing one fails.
 *
 * For the hot path's small writes from callers that come at once (messages accepted, audit
 * records, a session's receipts): one BEGIN/COMMIT per batch instead of per write. A caller that
 * writes one thing after another waits a turn of the event loop for company on each write, so
 * it should write whatever came meanwhile together (a session hands over its receipts in
 * chunks of what is waiting: the longer the wait, the larger the next chunk). A write must be
 * Store work only (it may run twice: once in a batch that rolled back, once alone) and short:
 * the batch holds the transaction while its members run. It needs no services: it runs in the
 * batch's fiber, with the Store's.
 */
export class GroupCommit extends Context.Tag("switchboard/GroupCommit")<GroupCommit, {
  /** Runs `write` in the next batch's transaction; answers after the commit. Inside a transaction already, joins it. */
  readonly write: <A, E>(write: Effect.Effect<A, E>) => Effect.Effect<A, E | StoreUnavailable>
  /**
   * Like `write`, for a write that merges with others of its kind: a batch runs `writeAll` once
   * for every item given with that same `writeAll` function (in the order they came), where its
   * first item came; each caller is answered once that commits. One statement for many rows
   * instead of one each (a send-text's row, its history and its chat). If the batch fails, each
   * item is written alone (`writeAll([item])`), like any other write.
   */
  readonly writeMerged: <I, E>(writeAll: (items: ReadonlyArray<I>) => Effect.Effect<void, E>, item: I) => Effect.Effect<void, E | StoreUnavailable>
}>() {}
