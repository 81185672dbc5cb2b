import { Migrator } from "@effect/sql"
import initial from "./migrations/0001_initial.js"
import sandboxLedger from "./migrations/0002_sandbox_ledger.js"
import batches from "./migrations/0003_batches.js"
import mediaAndReactions from "./migrations/0004_media_and_reactions.js"
import sandboxDirectory from "./migrations/0005_sandbox_directory.js"
import directory from "./migrations/0006_directory.js"
import webhooks from "./migrations/0007_webhooks.js"

/**
 * Every migration of the Store, keyed `<id>_<name>`. A static record rather than a directory
 * glob: it survives bundling, and the same list serves SQLite now and Postgres later.
 */
export const migrations = Migrator.fromRecord({
  "0001_initial": initial,
  "0002_sandbox_ledger": sandboxLedger,
  "0003_batches": batches,
  "0004_media_and_reactions": mediaAndReactions,
  "0005_sandbox_directory": sandboxDirectory,
  "0006_directory": directory,
  "0007_webhooks": webhooks
})

/**
 * Applies the pending migrations with the dialect-neutral migrator (the SQLite one only adds
 * a schema dump through the `sqlite3` binary, which we do not want). Safe to run on every
 * start: applied migrations are recorded in `effect_sql_migrations` and skipped.
 */
export const runMigrations = Migrator.make({})({ loader: migrations })
