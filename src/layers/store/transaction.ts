import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { StoreUnavailable } from "../../domain/Errors.js"
import { orStoreUnavailable } from "./storeFailure.js"

/**
 * Runs an effect in one Store transaction (nested ones become savepoints). Used to write a
 * change and the events announcing it together: the outbox never holds an event for a change
 * that did not happen, nor misses one for a change that did. A transaction that cannot begin or
 * commit fails with `StoreUnavailable`, like the statements in it.
 */
export type Transactionally = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreUnavailable, R>

export const makeTransactionally: Effect.Effect<Transactionally, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    orStoreUnavailable(sql.withTransaction(effect)) as Effect.Effect<A, E | StoreUnavailable, R>
)
