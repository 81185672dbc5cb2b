import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Bulk sends. A batch's messages are ordinary rows of `messages` with its `batch_id`; the
 * batch row only records what cannot be derived from them (who, how many, whether cancelled).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE batches (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    total INTEGER NOT NULL,
    cancelled_at TEXT,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX messages_batch_idx ON messages (batch_id, created_at)`
})
