import { SqlClient } from "@effect/sql"
import { Context, Deferred, Effect, Exit, Layer, Queue } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.js"
import { GroupCommit } from "../../runtime/ports/store/GroupCommit.js"
import { Store } from "../../runtime/ports/store/Store.js"

/** A write waiting for its batch, with the caller to answer once the batch is settled. */
interface Pending {
  readonly write: Effect.Effect<unknown, unknown>
  readonly answer: Deferred.Deferred<unknown, unknown>
}

/**
 * The most writes one transaction takes: enough to fold a burst into a few commits, few enough
 * that a batch holds the connection for milliseconds, not seconds.
 */
const MAX_BATCH = 256

/**
 * One turn of the event loop (after pending I/O): the callbacks of requests that arrived
 * meanwhile run and may add their writes. Statements are synchronous on SQLite, so without it a
 * batch would never find company: it runs to its commit before any other caller gets a turn.
 */
const nextTurn = Effect.async<void>((resume) => {
  const pending = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(pending))
})

/**
 * Group commit on the SQL Store (SQLite or Postgres). One fiber takes whatever writes are
 * waiting (at least one), runs them in one `Store.transactionally` and answers each once it has
 * committed; writes that arrive meanwhile wait for the next batch, so batches grow with the load
 * without any added delay. A batch that fails is rolled back and its writes run again one
 * transaction each. That is cheaper than a savepoint per write (one statement each, on every
 * batch) since failures are rare: a write that fails is a Store outage or a bug.
 */
export const SqlGroupCommit = Layer.scoped(
  GroupCommit,
  Effect.gen(function*() {
    const { transactionally } = yield* Store
    // At shutdown, a write still waiting for its batch is answered (interrupted), never left hanging.
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Pending>(), (queue) =>
      Effect.zipRight(
        Effect.flatMap(Queue.takeAll(queue), (left) => Effect.forEach(left, (pending) => Deferred.interrupt(pending.answer), { discard: true })),
        Queue.shutdown(queue)
      ))

    const settleAlone = (pending: Pending) =>
      Effect.flatMap(Effect.exit(transactionally(pending.write)), (exit) => Deferred.done(pending.answer, exit))

    const runBatch = (batch: ReadonlyArray<Pending>) =>
      Effect.gen(function*() {
        if (batch.length === 1) return yield* settleAlone(batch[0]!)
        const results = yield* Effect.exit(transactionally(Effect.forEach(batch, (pending) => pending.write)))
        if (Exit.isSuccess(results)) {
          return yield* Effect.forEach(batch, (pending, i) => Deferred.succeed(pending.answer, results.value[i]), { discard: true })
        }
        yield* Effect.forEach(batch, settleAlone, { discard: true })
      })

    /** The first write waits one turn of the event loop for the writes of requests already in hand. */
    const nextBatch = Effect.gen(function*() {
      const first = yield* Queue.take(queue)
      yield* nextTurn
      return [first, ...(yield* Queue.takeUpTo(queue, MAX_BATCH - 1))]
    })

    yield* nextBatch.pipe(
      // A batch taken is seen through, so that each of its callers gets an answer.
      Effect.flatMap((batch) => Effect.uninterruptible(runBatch(batch))),
      Effect.forever,
      Effect.forkScoped
    )

    const write = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreUnavailable, R> =>
      Effect.flatMap(Effect.context<R>(), (context) => {
        // Already in a transaction (holding the connection, on SQLite): the write joins it.
        if (Context.getOption(context as Context.Context<unknown>, SqlClient.TransactionConnection)._tag === "Some") {
          return transactionally(effect)
        }
        // The batch's fiber runs the write with the caller's services.
        const provided = Effect.provide(effect, context)
        return Effect.flatMap(Deferred.make<unknown, unknown>(), (answer) =>
          Effect.zipRight(
            Queue.offer(queue, { write: provided, answer }),
            Deferred.await(answer) as Effect.Effect<A, E | StoreUnavailable>
          ))
      })

    return GroupCommit.of({ write })
  })
)
