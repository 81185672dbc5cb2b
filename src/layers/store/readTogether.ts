import { SqlClient } from "@effect/sql"
import { Effect, Exit, FiberId, FiberSet, type Scope } from "effect"

/** A key waiting for its batch, with the caller to answer once the batch is read. */
interface Waiting<K, A, E> {
  readonly key: K
  readonly answer: (exit: Exit.Exit<A, E>) => void
}

/**
 * Reads of one kind, by key, that arrive within one turn of the event loop are made as one
 * query (`readMany` of all their keys, up to `maxKeys` a query), each caller answered with its
 * key's value, or `absent` when the query found none. A failed query fails every caller in it.
 *
 * For the reads thousands of sessions make as they start together (a restore): each was a
 * statement through @effect/sql of its own, ~100 Effect operations (issue 19); 64 starting at
 * once now share one. A caller inside a transaction reads alone, in it: a batch runs outside,
 * and on SQLite would wait for the connection that transaction holds.
 *
 * Plain callbacks, as in SqlGroupCommit: a queue and a deferred per read would cost what the
 * batching saves.
 */
export const readTogether = <K, A, E>(options: {
  readonly readMany: (keys: ReadonlyArray<K>) => Effect.Effect<ReadonlyMap<K, A>, E>
  readonly absent: A
  readonly maxKeys: number
}): Effect.Effect<(key: K) => Effect.Effect<A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { absent, maxKeys, readMany } = options
    // A batch is seen through whatever happens to its callers; closing the scope waits for it.
    const runBatch = yield* FiberSet.makeRuntime<never, void, never>()
    const waiting: Array<Waiting<K, A, E>> = []
    let turnScheduled = false
    let closed = false

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        for (const read of waiting.splice(0)) read.answer(Exit.interrupt(FiberId.none))
      })
    )

    const readBatch = (batch: ReadonlyArray<Waiting<K, A, E>>) =>
      Effect.map(Effect.exit(readMany(Array.from(new Set(batch.map((read) => read.key))))), (found) => {
        for (const read of batch) read.answer(Exit.map(found, (values) => values.get(read.key) ?? absent))
      })

    const startBatches = () => {
      turnScheduled = false
      if (closed) return
      while (waiting.length > 0) runBatch(readBatch(waiting.splice(0, maxKeys)))
    }

    const readAlone = (key: K) => Effect.map(readMany([key]), (values) => values.get(key) ?? absent)

    return (key: K) =>
      Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
        open._tag === "Some"
          ? readAlone(key)
          : closed
          ? Effect.interrupt
          : Effect.async<A, E>((resume) => {
            waiting.push({ key, answer: resume as Waiting<K, A, E>["answer"] })
            if (!turnScheduled) {
              turnScheduled = true
              setImmediate(startBatches)
            }
          }))
  })
