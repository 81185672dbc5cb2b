import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The durable outbox and webhooks. Every domain event is a row of `events`, written in the same
 * transaction as the change it announces; the dispatcher turns undispatched events into one
 * delivery per matching webhook, and records every attempt. The live stream replays from
 * `events` on reconnect (Last-Event-ID).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE events (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    data TEXT NOT NULL,
    dispatched INTEGER NOT NULL
  )`
  yield* sql`CREATE INDEX events_dispatched_idx ON events (dispatched, id)`
  yield* sql`CREATE INDEX events_session_idx ON events (session_id, id)`
  yield* sql`CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    session_id TEXT,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    headers TEXT NOT NULL,
    max_attempts INTEGER NOT NULL,
    secret TEXT NOT NULL,
    disabled_reason TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX webhooks_session_idx ON webhooks (session_id, created_at)`
  yield* sql`CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks (id),
    event_id TEXT NOT NULL,
    event_kind TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at TEXT,
    last_status_code INTEGER,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (status, next_attempt_at)`
  yield* sql`CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at)`
  yield* sql`CREATE TABLE webhook_attempts (
    delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
    attempt INTEGER NOT NULL,
    at TEXT NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
  )`
})
