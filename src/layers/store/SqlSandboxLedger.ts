import { SqlClient } from "@effect/sql"
import { Array as Arr, Effect, Layer } from "effect"
import { GroupCommit } from "../../runtime/ports/store/GroupCommit.js"
import { decodeHeld, decodeSent, type DirectoryKind, encodeHeld, encodeSent, SandboxLedger } from "../../runtime/engines/sandbox/Ledger.js"
import { orStoreUnavailable } from "./storeFailure.js"
import { SqlGroupCommit } from "./SqlGroupCommit.js"
import { SqlStore } from "./SqlStore.js"

/** Rows per INSERT: three parameters each, well inside either database's limit. */
const SENT_CHUNK = 256

/**
 * The sandbox network's memory in the Store, so that messages held for a sandbox session
 * until its consumer took them, and the receipts owed to their senders, survive a restart of
 * the gateway. One row per held event: holding and releasing are single-row writes. The
 * directory (groups, channels, labels, business flags) is one row per record. The records of
 * sent messages come in batches (see `SentRecords`) and share the group commit of the gateway's
 * own writes: under load a batch costs one statement in a transaction that commits anyway.
 */
export const SqlSandboxLedger = Layer.effect(
  SandboxLedger,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const groupCommit = yield* GroupCommit
    return SandboxLedger.of({
      load: Effect.gen(function*() {
        const owners = yield* sql<{ phone: string; session_id: string }>`SELECT phone, session_id FROM sandbox_phone_owners`
        // Postgres returns BIGINT as a string; SQLite as a number.
        const held = yield* sql<{ session_id: string; event_key: string; seq: number | string; event: string }>`
          SELECT session_id, event_key, seq, event FROM sandbox_held_events ORDER BY seq`
        const sent = yield* sql<{ engine_message_id: string; message: string }>`SELECT engine_message_id, message FROM sandbox_sent_messages`
        const directory = yield* sql<{ kind: DirectoryKind; record_id: string; record: string }>`
          SELECT kind, record_id, record FROM sandbox_directory`
        return {
          phoneOwners: owners.map((row) => [row.phone, row.session_id] as const),
          held: held.map((row) => ({ sessionId: row.session_id, key: row.event_key, seq: Number(row.seq), event: decodeHeld(row.event) })),
          sent: sent.map((row) => [row.engine_message_id, decodeSent(row.message)] as const),
          directory: directory.map((row) => ({ kind: row.kind, id: row.record_id, json: row.record }))
        }
      }).pipe(orStoreUnavailable),
      rememberOwner: (phone, sessionId) =>
        sql`INSERT INTO sandbox_phone_owners (phone, session_id) VALUES (${phone}, ${sessionId})
          ON CONFLICT (phone) DO UPDATE SET session_id = excluded.session_id`.pipe(Effect.asVoid, orStoreUnavailable),
      hold: (sessionId, key, seq, event) =>
        sql`INSERT INTO sandbox_held_events (session_id, event_key, seq, event) VALUES (${sessionId}, ${key}, ${seq}, ${encodeHeld(event)})
          ON CONFLICT (session_id, event_key) DO NOTHING`.pipe(Effect.asVoid, orStoreUnavailable),
      release: (sessionId, key) =>
        sql`DELETE FROM sandbox_held_events WHERE session_id = ${sessionId} AND event_key = ${key}`.pipe(Effect.asVoid, orStoreUnavailable),
      recordSent: (records) =>
        groupCommit.write(Effect.forEach(Arr.chunksOf(records, SENT_CHUNK), (chunk) =>
          Effect.suspend(() =>
            sql`INSERT INTO sandbox_sent_messages ${
              sql.insert(chunk.map(([engineMessageId, message]) => ({
                engine_message_id: engineMessageId,
                sender_session_id: message.senderSessionId,
                message: encodeSent(message)
              })))
            } ON CONFLICT (engine_message_id) DO UPDATE SET message = excluded.message`
          ), { discard: true })).pipe(orStoreUnavailable),
      forgetSession: (sessionId) =>
        Effect.all([
          sql`DELETE FROM sandbox_held_events WHERE session_id = ${sessionId}`,
          sql`DELETE FROM sandbox_phone_owners WHERE session_id = ${sessionId}`,
          sql`DELETE FROM sandbox_sent_messages WHERE sender_session_id = ${sessionId}`
        ], { discard: true }).pipe(sql.withTransaction, orStoreUnavailable),
      putRecord: (kind, id, json) =>
        (json === null
          ? sql`DELETE FROM sandbox_directory WHERE kind = ${kind} AND record_id = ${id}`
          : sql`INSERT INTO sandbox_directory (kind, record_id, record) VALUES (${kind}, ${id}, ${json})
            ON CONFLICT (kind, record_id) DO UPDATE SET record = excluded.record`).pipe(Effect.asVoid, orStoreUnavailable)
    })
  })
)

/**
 * The ledger on a `SqlClient` alone, with a group commit of its own: for a network outside a
 * gateway (a test, a tool). Inside one, `SqlSandboxLedger` shares the gateway's.
 */
export const SqlSandboxLedgerAlone = SqlSandboxLedger.pipe(Layer.provide(Layer.provideMerge(SqlGroupCommit, SqlStore)))
