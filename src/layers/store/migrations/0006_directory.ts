import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What each session knows of its WhatsApp world: groups (with participants), channels, labels
 * (with their chats) and contacts (both ids). The network is the authority; these are the
 * gateway's copy, kept current by engine events and operation results, listed with the
 * pagination convention, and available while a session is offline. Ids are unique per session.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE chat_groups (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    id TEXT NOT NULL,
    subject TEXT NOT NULL,
    description TEXT,
    owner TEXT,
    created_at TEXT,
    announce INTEGER NOT NULL,
    restricted INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
  )`
  yield* sql`CREATE TABLE group_participants (
    session_id TEXT NOT NULL,
    group_id TEXT NOT NULL,
    participant_id TEXT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (session_id, group_id, participant_id)
  )`
  yield* sql`CREATE TABLE channels (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    invite_code TEXT,
    subscribers INTEGER,
    role TEXT NOT NULL,
    created_at TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
  )`
  yield* sql`CREATE TABLE labels (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    color INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
  )`
  yield* sql`CREATE TABLE chat_labels (
    session_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    label_id TEXT NOT NULL,
    PRIMARY KEY (session_id, chat_id, label_id)
  )`
  yield* sql`CREATE TABLE contacts (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    id TEXT NOT NULL,
    phone TEXT,
    lid TEXT,
    name TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
  )`
  yield* sql`CREATE INDEX contacts_lid_idx ON contacts (session_id, lid)`
})
