import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import type { MigrationError } from "@effect/sql/Migrator"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Data, Effect, Either, Layer } from "effect"
import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { runMigrations } from "./Migrations.js"
import { DirectStatementsInTransactions } from "./directStatements.js"
import { checkpointOnAThread, OWN_CHECKPOINT_PAGES } from "./walCheckpointer.js"

/** How long a statement waits for another process's write lock before failing (ms). */
const BUSY_TIMEOUT_MS = 5_000

export class UnsupportedDatabaseUrl extends Data.TaggedError("UnsupportedDatabaseUrl")<{
  readonly url: string
  readonly message: string
}> {}

export type DatabaseTarget =
  | { readonly kind: "sqlite"; readonly filename: string }
  | { readonly kind: "postgres"; readonly url: string }

/**
 * `sqlite:<path>`, `sqlite://<path>` and `file:<path>` (relative to the working directory, or
 * absolute; `file:///abs` as a proper file URL too), or `postgres://` / `postgresql://`.
 */
export const parseDatabaseUrl = (url: string): Either.Either<DatabaseTarget, UnsupportedDatabaseUrl> => {
  const trimmed = url.trim()
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return Either.right({ kind: "postgres", url: trimmed })
  if (/^file:\/\//i.test(trimmed)) return Either.right({ kind: "sqlite", filename: fileURLToPath(trimmed) })
  const path = /^(?:sqlite:(?:\/\/)?|file:)(.+)$/i.exec(trimmed)?.[1]
  return path === undefined
    ? Either.left(
      new UnsupportedDatabaseUrl({
        url,
        message: `Unsupported database URL "${url}": use sqlite:<path> or postgres://user:pass@host:5432/db`
      })
    )
    : Either.right({ kind: "sqlite", filename: path === ":memory:" ? path : resolve(path) })
}

const ensureParentDirectory = (filename: string) =>
  Effect.try({
    try: () => {
      if (filename !== ":memory:") mkdirSync(dirname(resolve(filename)), { recursive: true })
    },
    catch: (cause) => new SqlError({ cause, message: `Cannot create the directory of database ${filename}` })
  })

/**
 * The Store on a SQLite file: creates its directory, opens it (WAL, via the client), sets the
 * connection's pragmas, then applies pending migrations before anything can use it.
 */
export const SqliteStoreLive = (
  filename: string
): Layer.Layer<SqlClient.SqlClient | SqliteClient.SqliteClient, SqlError | MigrationError> => {
  // `layer` only fails with a ConfigError when built from Config; a plain object cannot.
  const client = Layer.unwrapEffect(
    Effect.as(ensureParentDirectory(filename), Layer.orDie(SqliteClient.layer({ filename })))
  )
  const prepared = Layer.scopedDiscard(Effect.gen(function*() {
    const sql = yield* SqliteClient.SqliteClient
    // Pragmas are per connection and no-ops inside a transaction, so they go first. PRAGMA
    // takes no bound parameters, hence `unsafe` with our own constant.
    yield* sql.unsafe(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    yield* sql`PRAGMA foreign_keys = ON`
    yield* sql`PRAGMA synchronous = NORMAL`
    // Checkpoints run mostly on a thread of their own (walCheckpointer.ts); this connection's
    // only past this many pages, which under sustained writes is what starts the WAL over.
    yield* sql.unsafe(`PRAGMA wal_autocheckpoint = ${OWN_CHECKPOINT_PAGES}`)
    yield* runMigrations
    // At shutdown, before the client closes the file: fold the WAL into the database, so the
    // file is complete on its own (for a backup or a copy) and the next start replays nothing.
    yield* Effect.addFinalizer(() => Effect.ignore(sql`PRAGMA wal_checkpoint(TRUNCATE)`))
    if (filename !== ":memory:") yield* checkpointOnAThread(resolve(filename))
  }))
  return Layer.provideMerge(prepared, client)
}

/**
 * The Postgres Store, loaded when a `DATABASE_URL` asks for it: node-postgres and its client
 * cost a SQLite gateway's start-up ~50 ms for nothing.
 */
const postgresStore = (url: string) =>
  Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./PgStore.js")), ({ PgStoreLive }) => PgStoreLive(url)))

/**
 * The Store for a `DATABASE_URL`: a SQLite file (the default) or a Postgres database. Its
 * `SqlClient` runs a statement inside a transaction straight on the transaction's connection
 * (`directStatements.ts`).
 */
export const storeLayerFromUrl = (
  databaseUrl: string
): Layer.Layer<SqlClient.SqlClient, SqlError | MigrationError | UnsupportedDatabaseUrl> =>
  Either.match(parseDatabaseUrl(databaseUrl), {
    onLeft: Layer.fail,
    onRight: (target) =>
      Layer.provideMerge(
        DirectStatementsInTransactions,
        target.kind === "sqlite" ? SqliteStoreLive(target.filename) : postgresStore(target.url)
      )
  })
