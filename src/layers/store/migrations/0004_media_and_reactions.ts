import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Media and reactions. A message's media is described by one JSON column (mimetype, filename,
 * size, ptt, and whether its bytes are in the media store); the bytes live in the MediaStore.
 * Reactions are children of the message they are set on: one per person, changed in place,
 * deleted when taken back.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE messages ADD COLUMN media TEXT`
  yield* sql`CREATE TABLE message_reactions (
    message_id TEXT NOT NULL REFERENCES messages (id),
    from_id TEXT NOT NULL,
    emoji TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (message_id, from_id)
  )`
})
