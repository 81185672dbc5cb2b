import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The account around the messages. `chats` is the chat list: one row per conversation, with
 * its newest message, unread count and the account's own flags (archived, pinned, muted until),
 * kept in step with `messages` by the Store itself; its `id` is the root key pagination pages on
 * (`<session>/<chat>`), its labels are `chat_labels`. Contacts learn their push name, about,
 * business flag and whether the account blocked them. `calls` is the call log. A session's
 * settings are one JSON column (null: the defaults). Messages say whether they came live or
 * from the phone's history sync; groups know who may add members and whether joining by link
 * needs approval.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orderedText = sql.onDialectOrElse({ pg: () => sql.literal(`TEXT COLLATE "C"`), orElse: () => sql.literal("TEXT") })
  yield* sql`ALTER TABLE messages ADD COLUMN source TEXT NOT NULL DEFAULT 'live'`
  yield* sql`CREATE TABLE chats (
    id ${orderedText} PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    chat_id TEXT NOT NULL,
    name TEXT,
    type TEXT NOT NULL,
    last_message_id TEXT,
    last_activity_at ${orderedText} NOT NULL,
    unread_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    muted_until TEXT,
    updated_at TEXT NOT NULL,
    UNIQUE (session_id, chat_id)
  )`
  yield* sql`CREATE INDEX chats_activity_idx ON chats (session_id, last_activity_at)`
  for (const column of ["push_name", "about", "picture_url"]) {
    yield* sql`ALTER TABLE contacts ADD COLUMN ${sql.literal(column)} TEXT`
  }
  for (const flag of ["is_business", "blocked"]) {
    yield* sql`ALTER TABLE contacts ADD COLUMN ${sql.literal(flag)} INTEGER NOT NULL DEFAULT 0`
  }
  yield* sql`CREATE TABLE calls (
    id ${orderedText} PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    call_id TEXT NOT NULL,
    from_id TEXT NOT NULL,
    is_video INTEGER NOT NULL,
    is_group INTEGER NOT NULL,
    status TEXT NOT NULL,
    at ${orderedText} NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (session_id, call_id)
  )`
  yield* sql`CREATE INDEX calls_at_idx ON calls (session_id, at)`
  yield* sql`ALTER TABLE sessions ADD COLUMN settings TEXT`
  yield* sql`ALTER TABLE chat_groups ADD COLUMN member_add_mode TEXT NOT NULL DEFAULT 'admins'`
  yield* sql`ALTER TABLE chat_groups ADD COLUMN approval INTEGER NOT NULL DEFAULT 0`
})
