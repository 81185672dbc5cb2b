/**
 * Reads the gateway's Store from the benchmark's own process, so that watching the messages'
 * statuses costs the gateway nothing on its event loop: a read-only connection to its SQLite file
 * (WAL: readers never block its writer), or a connection of its own to its Postgres database.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, type Layer, ManagedRuntime, Redacted } from "effect"

export type StatusCounts = Readonly<Record<string, number>>

/** Statuses a message reaches once it went out (`failed` is counted apart). */
const OUT = ["sent", "delivered", "read", "played"]

export const sentOrBeyond = (counts: StatusCounts) => OUT.reduce((sum, status) => sum + (counts[status] ?? 0), 0)
export const total = (counts: StatusCounts) => Object.values(counts).reduce((sum, n) => sum + n, 0)

export interface StoreReader {
  /** The session's messages by status. */
  readonly statusCounts: (sessionId: string) => Promise<StatusCounts>
  readonly close: () => Promise<void>
}

/** `databaseUrl`: `sqlite:<file>` or `postgres://…`, as the gateway's DATABASE_URL. */
export const openStoreReader = (databaseUrl: string): StoreReader => {
  const client: Layer.Layer<SqlClient.SqlClient, unknown> = databaseUrl.startsWith("postgres")
    ? PgClient.layer({ url: Redacted.make(databaseUrl), applicationName: "switchboard-bench", maxConnections: 1 })
    : SqliteClient.layer({ filename: databaseUrl.replace(/^sqlite:/, ""), readonly: true })
  const runtime = ManagedRuntime.make(client)
  return {
    statusCounts: (sessionId) =>
      runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ status: string; n: number | string }>`SELECT status, count(*) AS n FROM messages WHERE session_id = ${sessionId} GROUP BY status`
      )).then((rows) => Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]))),
    close: () => runtime.dispose()
  }
}

export interface Drain {
  /** Whether at most `mayStayPending` of the session's messages were `pending` before the deadline. */
  readonly drained: boolean
  /** Messages still `pending` at the end. */
  readonly pending: number
  /**
   * Seconds from the call to the last change seen (a message stored or gone out): when drained,
   * when the last message went out, at `pollMs` resolution.
   */
  readonly seconds: number
  readonly counts: StatusCounts
}

const changed = (a: StatusCounts, b: StatusCounts) => total(a) !== total(b) || sentOrBeyond(a) !== sentOrBeyond(b)

/**
 * Polls the session's statuses every `pollMs` until at most `mayStayPending` are `pending` and
 * nothing changed for `settleSeconds` (requests still in flight when a load stopped may yet be
 * stored: give it about their latency), or until `maxSeconds` passed: the time the outbound lane
 * needs to catch up.
 *
 * `mayStayPending`: requests the load generator cut off in flight when it stopped (it closes its
 * sockets) may be stored and then never sent: the gateway stores the row, the handler is
 * interrupted by the closed connection before it queues it (seen on Postgres; issue 19's report).
 * Those must not keep the benchmark waiting; they are printed.
 */
export const waitUntilNonePending = async (
  reader: StoreReader,
  sessionId: string,
  options: { readonly maxSeconds: number; readonly settleSeconds: number; readonly mayStayPending?: number; readonly pollMs?: number }
): Promise<Drain> => {
  const started = performance.now()
  const seconds = () => (performance.now() - started) / 1000
  let counts = await reader.statusCounts(sessionId)
  let lastChange = 0
  for (;;) {
    const pending = counts["pending"] ?? 0
    const settled = seconds() - lastChange >= options.settleSeconds
    if (pending <= (options.mayStayPending ?? 0) && settled) return { drained: true, pending, seconds: lastChange, counts }
    if (seconds() >= options.maxSeconds) return { drained: false, pending, seconds: lastChange, counts }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 200))
    const next = await reader.statusCounts(sessionId)
    if (changed(counts, next)) lastChange = seconds()
    counts = next
  }
}

/** How long to wait for requests still in flight when a load stopped: about their p99 latency. */
export const settleAfter = (p99Ms: number) => Math.min(10, Math.max(0.5, (1.5 * p99Ms) / 1000))
