import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Runs `effect` all or nothing: in the transaction the fiber is already in (a group commit's
 * batch, a caller's `transactionally`), or else in one of its own. Unlike `sql.withTransaction`
 * it opens no savepoint inside a transaction (a statement saved on every hot-path write): a
 * failure fails the enclosing transaction whole, which is what its callers expect anyway.
 */
export const atomically = (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
    open._tag === "Some" ? effect : sql.withTransaction(effect))
