import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { SqliteStoreLive } from "../../src/layers/store/SqliteStore.js"
import { SqlSandboxLedgerAlone } from "../../src/layers/store/SqlSandboxLedger.js"

/** The sandbox network's SQL ledger on a real SQLite file. */
export const ledgerAt = (file: string) => Layer.provide(SqlSandboxLedgerAlone, SqliteStoreLive(file))

/** The keys of what the ledger in that file holds for a session, in arrival order. */
export const heldRows = (file: string, sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event_key: string }>`SELECT event_key FROM sandbox_held_events WHERE session_id = ${sessionId} ORDER BY seq`
  ).pipe(Effect.map((rows) => rows.map((row) => row.event_key)), Effect.provide(SqliteStoreLive(file)))
