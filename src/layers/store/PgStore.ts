import { SqlClient } from "@effect/sql"
import type { MigrationError } from "@effect/sql/Migrator"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted } from "effect"
import { runMigrations } from "./Migrations.js"

/**
 * Connections the gateway keeps to Postgres at most (a transaction holds one while it runs). In a
 * cluster one of them is held for good by the runner's liveness lock (`RunnerLiveness`), so the
 * pool has one more than the ten the Store's work was sized for.
 */
const MAX_CONNECTIONS = 11

/** The advisory lock that migrations hold on Postgres (any constant of ours: "Swbd"). */
const MIGRATION_LOCK = 0x53776264

/**
 * Migrations, one process at a time: gateways started together on a new database would
 * otherwise race to create the migrations table (the migrator's own lock comes after that).
 * A session-level advisory lock on a connection of its own, released when they are done.
 */
const migrateExclusively = Effect.scoped(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const connection = yield* sql.reserve
    yield* connection.executeRaw("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK])
    yield* Effect.ensuring(
      runMigrations,
      Effect.ignore(connection.executeRaw("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]))
    )
  })
)

/**
 * The Store on Postgres (`postgres://user:pass@host:5432/db`, `postgresql://…`, read by
 * node-postgres, TLS options included): a connection pool, then pending migrations before
 * anything can use it.
 *
 * The same repositories and migrations as on SQLite. Column names are used as written
 * (snake_case): no name transforms. What differs comes back in a form the repositories read:
 * BIGINT and COUNT(*) as strings (see `columns.ts`), INTEGER as numbers.
 */
export const PgStoreLive = (
  url: string
): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError | MigrationError> => {
  const client = PgClient.layer({
    url: Redacted.make(url),
    applicationName: "switchboard",
    maxConnections: MAX_CONNECTIONS,
    connectTimeout: Duration.seconds(10)
  })
  return Layer.provideMerge(Layer.effectDiscard(migrateExclusively), client)
}
