import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The sandbox network's memory (see `SandboxLedger`): which session owns a sandbox phone,
 * what is held for a session that is away, and the messages whose receipts it routes.
 * Values are JSON text, like the rest of the schema.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE sandbox_phone_owners (
    phone TEXT PRIMARY KEY,
    session_id TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE sandbox_held_events (
    session_id TEXT PRIMARY KEY,
    events TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE sandbox_sent_messages (
    engine_message_id TEXT PRIMARY KEY,
    message TEXT NOT NULL
  )`
})
