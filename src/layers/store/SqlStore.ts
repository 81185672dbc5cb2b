import { SqlClient } from "@effect/sql"
import { Effect, Exit, FiberRef, Layer } from "effect"
import { Store } from "../../runtime/ports/store/Store.js"
import { orStoreUnavailable } from "./storeFailure.js"

/**
 * What waits for the commit of the transaction a fiber is in; `undefined` outside one. A fiber
 * forked inside a transaction is outside it (it may outlive the commit).
 */
interface OpenTransaction {
  readonly afterCommit: Array<Effect.Effect<void>>
}
const currentTransaction = FiberRef.unsafeMake<OpenTransaction | undefined>(undefined, { fork: () => undefined })

/**
 * Once committed, the change stands: what waits for it runs whole (as a finalizer, not cut off
 * by an interruption) and cannot turn the commit into a failure; a failure of its own is logged.
 */
const runAfterCommit = (actions: ReadonlyArray<Effect.Effect<void>>) =>
  Effect.forEach(actions, (action) =>
    Effect.catchAllCause(action, (cause) => Effect.logWarning("an action after a commit failed", cause)), { discard: true })

/** The Store's transactions on the SQL client (SQLite or Postgres). */
export const SqlStore = Layer.effect(
  Store,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Store.of({
      transactionally: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.flatMap(FiberRef.get(currentTransaction), (open) => {
          if (open !== undefined) {
            // A savepoint: what it queued goes with it if it rolls back.
            const mark = open.afterCommit.length
            return orStoreUnavailable(sql.withTransaction(effect)).pipe(
              Effect.tapErrorCause(() => Effect.sync(() => void open.afterCommit.splice(mark)))
            )
          }
          const opened: OpenTransaction = { afterCommit: [] }
          // Run as the transaction's exit is settled, so nothing comes between the commit and it.
          return orStoreUnavailable(sql.withTransaction(Effect.locally(effect, currentTransaction, opened))).pipe(
            Effect.onExit((exit) => (Exit.isSuccess(exit) ? runAfterCommit(opened.afterCommit) : Effect.void))
          )
        }),
      afterCommit: (effect) =>
        Effect.flatMap(FiberRef.get(currentTransaction), (open) =>
          open === undefined ? effect : Effect.sync(() => void open.afterCommit.push(effect))),
      ping: orStoreUnavailable(Effect.asVoid(sql`SELECT 1`))
    }))
)
