import type { SqlClient } from "@effect/sql"
import { Console, Effect, Option } from "effect"
import type { MediaStoreService } from "../runtime/ports/MediaStore.js"
import { fromCount } from "../layers/store/columns.js"
import { type TableSpec, tables } from "./tables.js"

/**
 * Copies a Store (and its media) to another backend: SQLite ↔ Postgres, disk ↔ S3. Safe to run
 * again: rows and objects the target already has are skipped, so an interrupted run is finished
 * by running it once more. Counts are compared at the end.
 */

export interface MigrationOptions {
  readonly from: SqlClient.SqlClient
  readonly to: SqlClient.SqlClient
  /** Copy into a target that already holds data (a re-run, or a merge the operator wants). */
  readonly force: boolean
  readonly batchSize?: number | undefined
  readonly media?: {
    readonly from: MediaStoreService
    readonly to: MediaStoreService
    /** Every media key the source store holds. */
    readonly keys: Effect.Effect<ReadonlyArray<string>, unknown>
  } | undefined
  readonly log?: ((line: string) => Effect.Effect<void>) | undefined
}

export class TargetNotEmpty extends Error {
  constructor(readonly counts: Readonly<Record<string, number>>) {
    super(`the target already holds data (${Object.entries(counts).filter(([, n]) => n > 0).map(([t, n]) => `${t}: ${n}`).join(", ")}); pass --force to copy into it anyway`)
  }
}

export class CountMismatch extends Error {
  constructor(readonly mismatches: ReadonlyArray<{ readonly table: string; readonly source: number; readonly target: number }>) {
    super(`counts differ after the copy: ${mismatches.map((m) => `${m.table} ${m.source} → ${m.target}`).join(", ")}`)
  }
}

const countRows = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM ${sql(table)}`, ([row]) => fromCount(row?.total))

const sameKey = (spec: TableSpec, a: Record<string, unknown>, b: Record<string, unknown>) =>
  spec.key.every((column) => String(a[column]) === String(b[column]))

/**
 * One table, batch by batch in key order; rows the target has are left as they are ("copied"
 * counts the new ones: it says what a re-run still had to do).
 */
const copyTable = (options: MigrationOptions, spec: TableSpec, batchSize: number) =>
  Effect.gen(function*() {
    const { from, to } = options
    const order = from.literal(spec.key.join(", "))
    let offset = 0
    let copied = 0
    while (true) {
      const rows = yield* from<Record<string, unknown>>`SELECT * FROM ${from(spec.name)} ORDER BY ${order} LIMIT ${batchSize} OFFSET ${offset}`
      if (rows.length === 0) break
      offset += rows.length
      // The batch is written in a transaction of the target's own. Reads stay outside it: inside
      // a transaction @effect/sql sends every client's statements to that transaction's connection.
      copied += yield* to.withTransaction(Effect.gen(function*() {
        const fresh = spec.keyless ? yield* withoutExisting(to, spec, rows) : rows
        if (fresh.length === 0) return 0
        const conflict = spec.keyless ? to.literal("") : to`ON CONFLICT (${to.literal(spec.key.join(", "))}) DO NOTHING`
        yield* to`INSERT INTO ${to(spec.name)} ${to.insert(fresh.map((row) => ({ ...row })))} ${conflict}`
        return fresh.length
      }))
      if (rows.length < batchSize) break
    }
    return copied
  })

/** For a table without a unique key: the rows of the batch the target does not have yet. */
const withoutExisting = (to: SqlClient.SqlClient, spec: TableSpec, rows: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const [first] = spec.key
    const values = [...new Set(rows.map((row) => row[first!] as string))]
    const existing = yield* to<Record<string, unknown>>`SELECT ${to.literal(spec.key.join(", "))} FROM ${to(spec.name)}
      WHERE ${to(first!)} IN ${to.in(values)}`
    return rows.filter((row) => !existing.some((known) => sameKey(spec, known, row)))
  })

export const migrate = (options: MigrationOptions) =>
  Effect.gen(function*() {
    const log = options.log ?? ((line: string) => Console.log(line))
    const batchSize = options.batchSize ?? 500
    const targetCounts = Object.fromEntries(yield* Effect.forEach(tables, (spec) => Effect.map(countRows(options.to, spec.name), (n) => [spec.name, n] as const)))
    if (!options.force && Object.values(targetCounts).some((n) => n > 0)) return yield* Effect.fail(new TargetNotEmpty(targetCounts))

    for (const spec of tables) {
      const total = yield* countRows(options.from, spec.name)
      const copied = yield* copyTable(options, spec, batchSize)
      yield* log(`${spec.name.padEnd(24)} ${String(total).padStart(8)} rows, ${copied} copied`)
    }

    let objects = 0
    if (options.media !== undefined) {
      const { from, keys, to } = options.media
      const all = yield* keys
      for (const key of all) {
        const data = yield* from.read(key)
        if (Option.isNone(data)) continue
        if (Option.isSome(yield* to.read(key))) continue
        yield* to.put(key, data.value)
        objects++
      }
      yield* log(`${"media".padEnd(24)} ${String(all.length).padStart(8)} objects, ${objects} copied`)
    }

    const mismatches = yield* Effect.forEach(tables, (spec) =>
      Effect.map(Effect.all([countRows(options.from, spec.name), countRows(options.to, spec.name)]), ([source, target]) => ({ table: spec.name, source, target }))
    ).pipe(Effect.map((counts) => counts.filter((c) => (options.force ? c.target < c.source : c.target !== c.source))))
    if (mismatches.length > 0) return yield* Effect.fail(new CountMismatch(mismatches))
    yield* log("verified: every table holds as many rows as the source")
    return { objects }
  })

/**
 * The media keys a Store refers to: each message's kept media, and what the sandbox network's
 * media server may hold for the messages it carried (a missing one is skipped).
 */
export const mediaKeysOf = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const messages = yield* sql<{ readonly id: string; readonly session_id: string; readonly media: string }>`SELECT id, session_id, media
      FROM messages WHERE media IS NOT NULL`
    const kept = messages.filter((row) => (JSON.parse(row.media) as { readonly stored?: boolean }).stored === true)
    const carried = yield* sql<{ readonly engine_message_id: string }>`SELECT engine_message_id FROM sandbox_sent_messages`
    return [
      ...kept.map((row) => `${row.session_id}/${row.id}`),
      ...carried.map((row) => `sandbox-cdn/${row.engine_message_id}`)
    ]
  })
