import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Context, Effect, Layer } from "effect"

/**
 * A statement that, run inside a transaction, goes straight to the transaction's connection.
 *
 * @effect/sql runs every statement as a traced span in a scope of its own, acquiring the
 * connection through that scope (a ~70-operation path in Effect's runtime, ~30–50 µs of CPU,
 * as much as the SQLite statement itself). Inside a transaction none of it is needed: the
 * connection is already held by this fiber (the transaction's `TransactionConnection`), and the
 * transaction's own span names the work. So there the statement is compiled and handed to that
 * connection, which prepares it (from its statement cache) and runs it, as it would anyway.
 * Outside a transaction the statement runs as @effect/sql runs it.
 *
 * The statement stays the one the client built (an object whose prototype is that statement,
 * with only its `commit`, what running it does, replaced), so it nests in other statements and
 * its `compile`, `raw`, `values` and the rest behave as before.
 */
const directInTransaction = <A extends object>(statement: Statement<A>): Statement<A> =>
  Object.create(statement, {
    commit: {
      value: () =>
        Effect.withFiberRuntime<ReadonlyArray<A>, SqlError>((fiber) => {
          const open = Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)
          if (open._tag === "None") return statement
          const [text, params] = statement.compile()
          return open.value[0].execute(text, params, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError>
        })
    }
  })

/**
 * The client with `directInTransaction` statements. Only for a client that transforms no rows
 * (the Store's: column names are used as written), since the connection is handed none.
 */
export const withDirectStatementsInTransactions = (sql: SqlClient.SqlClient): SqlClient.SqlClient =>
  Object.assign(
    (strings: TemplateStringsArray | string, ...args: Array<any>) =>
      // A template is a statement; a plain string is an identifier (`sql("table")`), left as it is.
      typeof strings === "string" ? sql(strings) : directInTransaction(sql(strings, ...args)),
    sql
  ) as SqlClient.SqlClient

/** Puts `withDirectStatementsInTransactions` in place of the `SqlClient` it is given. */
export const DirectStatementsInTransactions = Layer.effect(
  SqlClient.SqlClient,
  Effect.map(SqlClient.SqlClient, withDirectStatementsInTransactions)
)
