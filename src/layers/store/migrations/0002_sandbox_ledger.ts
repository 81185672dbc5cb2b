import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The sandbox network's memory (see `SandboxLedger`): which session owns a sandbox phone,
 * what is held for a session until its consumer took it, and the messages whose receipts it
 * routes. Values are JSON text, like the rest of the schema.
 *
 * Each held event is a row of its own (keyed by session and event, ordered by `seq`), so
 * holding n events for a session that is away costs n inserts, not n rewrites of a list.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE sandbox_phone_owners (
    phone TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX sandbox_phone_owners_session_idx ON sandbox_phone_owners (session_id)`
  yield* sql`CREATE TABLE sandbox_held_events (
    session_id TEXT NOT NULL,
    event_key TEXT NOT NULL,
    seq BIGINT NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (session_id, event_key)
  )`
  // The sender is a column of its own so that forgetting a session finds its messages.
  yield* sql`CREATE TABLE sandbox_sent_messages (
    engine_message_id TEXT PRIMARY KEY,
    sender_session_id TEXT NOT NULL,
    message TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX sandbox_sent_messages_sender_idx ON sandbox_sent_messages (sender_session_id)`
})
