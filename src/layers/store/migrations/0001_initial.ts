import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The initial schema. Portable between SQLite and Postgres on purpose: only TEXT, INTEGER and
 * BIGINT columns; timestamps are ISO-8601 UTC text (which sorts chronologically); booleans are
 * INTEGER 0/1; JSON is TEXT. One statement per call, since SQLite prepares one at a time.
 *
 * Foreign keys have no ON DELETE actions: the repositories delete children explicitly, in
 * order, so both databases behave the same (SQLite enforces them once `foreign_keys` is on).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    engine TEXT NOT NULL,
    status TEXT NOT NULL,
    desired_running INTEGER NOT NULL DEFAULT 0,
    phone TEXT,
    push_name TEXT,
    lid TEXT,
    proxy_url TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX sessions_created_at_idx ON sessions (created_at, id)`

  // Credentials are kind "creds" / key_id "creds"; Signal keys are kind=<type>, key_id=<id>.
  yield* sql`CREATE TABLE engine_auth (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    kind TEXT NOT NULL,
    key_id TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, kind, key_id)
  )`

  yield* sql`CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    chat_id TEXT NOT NULL,
    from_id TEXT NOT NULL,
    to_id TEXT NOT NULL,
    from_me INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT,
    caption TEXT,
    status TEXT NOT NULL,
    ack INTEGER NOT NULL,
    error TEXT,
    engine_message_id TEXT,
    quoted_message_id TEXT,
    mentions TEXT,
    batch_id TEXT,
    timestamp TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX messages_session_timestamp_idx ON messages (session_id, timestamp, id)`
  yield* sql`CREATE INDEX messages_session_engine_id_idx ON messages (session_id, engine_message_id)`
  yield* sql`CREATE INDEX messages_session_status_idx ON messages (session_id, status)`

  yield* sql`CREATE TABLE message_status_history (
    message_id TEXT NOT NULL REFERENCES messages (id),
    status TEXT NOT NULL,
    at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX message_status_history_message_idx ON message_status_history (message_id)`

  yield* sql`CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    expires_at TEXT,
    revoked_at TEXT
  )`
})
