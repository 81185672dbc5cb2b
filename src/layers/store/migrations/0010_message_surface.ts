import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every kind of message. What a message carries beyond text and media is a JSON column each
 * (location, contact cards, the poll's definition, the link preview, earlier texts, how the
 * send is to go out); the flags are INTEGER 0/1. Poll votes are children of their poll: the
 * latest choice of each voter, replaced in place. Presence is the last heard of each contact.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const column of ["location", "contacts", "poll", "link_preview", "edited_at", "edits", "send_options"]) {
    yield* sql`ALTER TABLE messages ADD COLUMN ${sql.literal(column)} TEXT`
  }
  for (const flag of ["forwarded", "revoked", "starred", "pinned"]) {
    yield* sql`ALTER TABLE messages ADD COLUMN ${sql.literal(flag)} INTEGER NOT NULL DEFAULT 0`
  }
  yield* sql`CREATE TABLE poll_votes (
    message_id TEXT NOT NULL REFERENCES messages (id),
    voter TEXT NOT NULL,
    options TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (message_id, voter)
  )`
  yield* sql`CREATE TABLE presence (
    session_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    state TEXT NOT NULL,
    last_seen TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, chat_id)
  )`
})
