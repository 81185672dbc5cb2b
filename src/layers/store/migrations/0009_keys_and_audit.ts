import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * API keys get their limits (sessions, addresses, an own rate limit) and a visible prefix; the
 * audit log records who did what from where. Audit records are listed newest first by `id`
 * (UUID v7) and pruned by `at`, so on Postgres both sort by code point (see 0008).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN key_prefix TEXT`
  yield* sql`ALTER TABLE api_keys ADD COLUMN allowed_sessions TEXT`
  yield* sql`ALTER TABLE api_keys ADD COLUMN allowed_ips TEXT`
  yield* sql`ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER`
  yield* sql`ALTER TABLE api_keys ADD COLUMN updated_at TEXT`

  const orderedText = sql.onDialectOrElse({ pg: () => sql.literal(`TEXT COLLATE "C"`), orElse: () => sql.literal("TEXT") })
  yield* sql`CREATE TABLE audit_log (
    id ${orderedText} PRIMARY KEY,
    at ${orderedText} NOT NULL,
    request_id TEXT NOT NULL,
    key_id TEXT,
    key_name TEXT,
    client_ip TEXT NOT NULL,
    method TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    session_id TEXT,
    outcome TEXT NOT NULL,
    status INTEGER NOT NULL,
    code TEXT
  )`
  yield* sql`CREATE INDEX audit_log_at_idx ON audit_log (at)`
  yield* sql`CREATE INDEX audit_log_key_idx ON audit_log (key_id, id)`
  yield* sql`CREATE INDEX audit_log_session_idx ON audit_log (session_id, id)`
})
