import { SqlClient } from "@effect/sql"
import { Effect, Exit, FiberId, FiberSet, Layer } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.js"
import { GroupCommit } from "../../runtime/ports/store/GroupCommit.js"
import { Store } from "../../runtime/ports/store/Store.js"

/** A write waiting for its batch, with the caller to answer once the batch is settled. */
interface Pending {
  /** The write alone; for an item of a merged write, `writeAll([item])`. */
  readonly write: Effect.Effect<unknown, unknown>
  readonly answer: (exit: Exit.Exit<unknown, unknown>) => void
  /** An item of a merged write (`writeMerged`): written with the batch's other items of its `writeAll`. */
  readonly merged?: { readonly writeAll: (items: ReadonlyArray<unknown>) => Effect.Effect<void, unknown>; readonly item: unknown }
}

/**
 * What a batch runs, in order: each plain write, and each merged write once, where its first
 * item came (so before plain writes that came between its items: writes of one batch must not
 * depend on each other's order); `stepOf` says, for each member of the batch, which step's
 * result it gets (-1: a merged item, which gets void).
 */
const stepsOf = (batch: ReadonlyArray<Pending>) => {
  const steps: Array<Effect.Effect<unknown, unknown>> = []
  const stepOf: Array<number> = []
  const mergedItems = new Map<NonNullable<Pending["merged"]>["writeAll"], Array<unknown>>()
  for (const pending of batch) {
    if (pending.merged === undefined) {
      stepOf.push(steps.push(pending.write) - 1)
      continue
    }
    const { item, writeAll } = pending.merged
    const items = mergedItems.get(writeAll)
    if (items !== undefined) {
      items.push(item)
    } else {
      const started = [item]
      mergedItems.set(writeAll, started)
      steps.push(Effect.suspend(() => writeAll(started)))
    }
    stepOf.push(-1)
  }
  return { steps, stepOf }
}

/**
 * The most writes one transaction takes: enough to fold a burst into a few commits, few enough
 * that a batch holds the connection for milliseconds, not seconds.
 */
const MAX_BATCH = 256

/**
 * Group commit on the SQL Store (SQLite or Postgres). Writes wait in a list; one turn of the
 * event loop after the first (after pending I/O: the callbacks of requests that arrived
 * meanwhile run and may add theirs), a batch takes them all, runs them in one
 * `Store.transactionally` and answers each once it has committed. One batch runs at a time:
 * writes that arrive meanwhile wait for the next, so batches grow with the load without any
 * added delay. (Statements are synchronous on SQLite: without the turn a batch would never find
 * company, running to its commit before any other caller got a turn.)
 *
 * A batch that fails is rolled back and its writes run again one transaction each. That is
 * cheaper than a savepoint per write (one statement each, on every batch) since failures are
 * rare: a write that fails is a Store outage or a bug.
 *
 * Plain callbacks rather than a queue, a deferred per write and a fiber waiting on them: this
 * is on every send twice (the message and its audit record), and those cost ~60 µs of CPU per
 * write in Effect operations, more than the insert.
 */
export const SqlGroupCommit = Layer.scoped(
  GroupCommit,
  Effect.gen(function*() {
    const { transactionally } = yield* Store
    // A batch is seen through whatever happens to its callers; closing the layer waits for it.
    const runBatchFiber = yield* FiberSet.makeRuntime<never, void, never>()
    const waiting: Array<Pending> = []
    let turnScheduled = false
    let running = false
    let closed = false

    // At shutdown, a write still waiting for its batch is answered (interrupted), never left hanging.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        for (const pending of waiting.splice(0)) pending.answer(Exit.interrupt(FiberId.none))
      })
    )

    const settleAlone = (pending: Pending) => Effect.map(Effect.exit(transactionally(pending.write)), pending.answer)

    const runBatch = (batch: ReadonlyArray<Pending>): Effect.Effect<void> => {
      if (batch.length === 1) return settleAlone(batch[0]!)
      const { stepOf, steps } = stepsOf(batch)
      return Effect.flatMap(Effect.exit(transactionally(Effect.all(steps))), (results) =>
        Exit.isSuccess(results)
          ? Effect.sync(() => batch.forEach((pending, i) => pending.answer(Exit.succeed(stepOf[i]! < 0 ? undefined : results.value[stepOf[i]!]))))
          : Effect.forEach(batch, settleAlone, { discard: true }))
    }

    const startBatch = () => {
      turnScheduled = false
      if (running || closed || waiting.length === 0) return
      running = true
      const batch = waiting.splice(0, MAX_BATCH)
      runBatchFiber(Effect.ensuring(Effect.uninterruptible(runBatch(batch)), Effect.sync(afterBatch)))
    }
    const afterBatch = () => {
      running = false
      awaitTurn()
    }
    const awaitTurn = () => {
      if (turnScheduled || waiting.length === 0) return
      turnScheduled = true
      setImmediate(startBatch)
    }

    const enqueue = <A, E>(effect: Effect.Effect<A, E>, merged?: Pending["merged"]): Effect.Effect<A, E | StoreUnavailable> =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
        // Already in a transaction (holding the connection, on SQLite): the write joins it.
        open._tag === "Some"
          ? transactionally(effect)
          : closed
          ? Effect.interrupt
          : Effect.async<A, E | StoreUnavailable>((resume) => {
            waiting.push(merged === undefined ? { write: effect, answer: resume as Pending["answer"] } : { write: effect, answer: resume as Pending["answer"], merged })
            awaitTurn()
          }))

    return GroupCommit.of({
      write: (effect) => enqueue(effect),
      writeMerged: (writeAll, item) =>
        enqueue(Effect.suspend(() => writeAll([item])), { writeAll: writeAll as NonNullable<Pending["merged"]>["writeAll"], item })
    })
  })
)
