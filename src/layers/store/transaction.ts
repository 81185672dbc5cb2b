import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Runs an effect in one Store transaction (nested ones become savepoints). Used to write a
 * change and the events announcing it together: the outbox never holds an event for a change
 * that did not happen, nor misses one for a change that did.
 */
export type Transactionally = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

export const makeTransactionally: Effect.Effect<Transactionally, never, SqlClient.SqlClient> = Effect.map(
  SqlClient.SqlClient,
  (sql) => (effect) => sql.withTransaction(effect).pipe(Effect.catchIf(isSqlError, (error) => Effect.die(error))) as never
)

const isSqlError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { readonly _tag?: unknown })._tag === "SqlError"
