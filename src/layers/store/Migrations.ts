import { Migrator } from "@effect/sql"
import initial from "./migrations/0001_initial.js"
import sandboxLedger from "./migrations/0002_sandbox_ledger.js"
import batches from "./migrations/0003_batches.js"
import mediaAndReactions from "./migrations/0004_media_and_reactions.js"
import sandboxDirectory from "./migrations/0005_sandbox_directory.js"
import directory from "./migrations/0006_directory.js"
import webhooks from "./migrations/0007_webhooks.js"
import postgresTextOrder from "./migrations/0008_postgres_text_order.js"
import keysAndAudit from "./migrations/0009_keys_and_audit.js"
import messageSurface from "./migrations/0010_message_surface.js"
import account from "./migrations/0011_account.js"
import webhookDueByWebhook from "./migrations/0012_webhook_due_by_webhook.js"

/**
 * Every migration of the Store, keyed `<id>_<name>`. A static record rather than a directory
 * glob: it survives bundling. The same list serves SQLite and Postgres: portable SQL only
 * (TEXT/INTEGER/BIGINT, ISO-8601 text times, JSON as TEXT, INTEGER 0/1 booleans), and on
 * Postgres, text that is sorted or compared with < and > is `COLLATE "C"` (see 0008).
 */
export const migrations = Migrator.fromRecord({
  "0001_initial": initial,
  "0002_sandbox_ledger": sandboxLedger,
  "0003_batches": batches,
  "0004_media_and_reactions": mediaAndReactions,
  "0005_sandbox_directory": sandboxDirectory,
  "0006_directory": directory,
  "0007_webhooks": webhooks,
  "0008_postgres_text_order": postgresTextOrder,
  "0009_keys_and_audit": keysAndAudit,
  "0010_message_surface": messageSurface,
  "0011_account": account,
  "0012_webhook_due_by_webhook": webhookDueByWebhook
})

/**
 * Applies the pending migrations with the dialect-neutral migrator (the SQLite one only adds
 * a schema dump through the `sqlite3` binary, which we do not want). Safe to run on every
 * start: applied migrations are recorded in `effect_sql_migrations` and skipped.
 */
export const runMigrations = Migrator.make({})({ loader: migrations })
