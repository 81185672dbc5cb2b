import { storeOperation } from "./storeFailure.js"
import { AuditRepo } from "../../runtime/ports/store/AuditRepo.js"
import { SqlClient } from "@effect/sql"
import { Array as Arr, Effect, Layer, Option } from "effect"
import type { AuditFilter, AuditRecord } from "../../domain/Audit.js"
import type { PageRequest } from "../../domain/Pagination.js"
import { listByRootIds } from "./paging.js"

interface AuditRow {
  readonly id: string
  readonly at: string
  readonly request_id: string
  readonly key_id: string | null
  readonly key_name: string | null
  readonly client_ip: string
  readonly method: string
  readonly action: string
  readonly target: string
  readonly session_id: string | null
  readonly outcome: AuditRecord["outcome"]
  readonly status: unknown
  readonly code: string | null
}

const fromRow = (row: AuditRow): AuditRecord => ({
  id: row.id,
  at: row.at,
  requestId: row.request_id,
  keyId: row.key_id,
  keyName: row.key_name,
  clientIp: row.client_ip,
  method: row.method,
  action: row.action,
  target: row.target,
  sessionId: row.session_id,
  outcome: row.outcome,
  status: Number(row.status),
  code: row.code
})

const rowOf = (record: AuditRecord) => ({
  id: record.id,
  at: record.at,
  request_id: record.requestId,
  key_id: record.keyId,
  key_name: record.keyName,
  client_ip: record.clientIp,
  method: record.method,
  action: record.action,
  target: record.target,
  session_id: record.sessionId,
  outcome: record.outcome,
  status: record.status,
  code: record.code
})

/** Records per INSERT: 13 parameters each, inside SQLite's and Postgres' limits. */
const INSERT_CHUNK = 200

export const SqlAuditRepo = Layer.effect(
  AuditRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = storeOperation((records: ReadonlyArray<AuditRecord>) =>
      Effect.forEach(Arr.chunksOf(records, INSERT_CHUNK), (chunk) =>
        Effect.suspend(() =>
          sql`INSERT INTO audit_log ${sql.insert(chunk.map(rowOf))}`
        ), { discard: true }))

    /** Newest first; ids are UUID v7, so their order is the order of time. */
    const list = storeOperation((filter: AuditFilter, page: Option.Option<PageRequest>) =>
      listByRootIds(sql, {
        table: "audit_log",
        where: sql.and([
          sql.literal("1 = 1"),
          ...(filter.keyId === undefined ? [] : [sql`key_id = ${filter.keyId}`]),
          ...(filter.sessionId === undefined ? [] : [sql`session_id = ${filter.sessionId}`]),
          ...(filter.action === undefined ? [] : [sql`action = ${filter.action}`]),
          ...(filter.outcome === undefined ? [] : [sql`outcome = ${filter.outcome}`]),
          ...(filter.since === undefined ? [] : [sql`at >= ${filter.since}`]),
          ...(filter.until === undefined ? [] : [sql`at < ${filter.until}`])
        ]),
        orderBy: sql.literal("id DESC"),
        page,
        loadByIds: (ids) => Effect.map(sql<AuditRow>`SELECT * FROM audit_log WHERE id IN ${sql.in(ids)}`, (rows) => rows.map(fromRow)),
        idOf: (record) => record.id
      }))

    /** Drops records older than `before`; returns how many went. */
    const prune = storeOperation((before: string) =>
      sql<{ readonly id: string }>`DELETE FROM audit_log WHERE at < ${before} RETURNING id`.pipe(Effect.map((rows) => rows.length)))

    return { insert, list, prune } as const
  })
)
