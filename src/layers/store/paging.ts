import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Array as Arr, Effect, Option } from "effect"
import { offsetOf, type Page, type PageRequest } from "../../domain/Pagination.js"
import { fromCount } from "./columns.js"

/** Ids per detail query: an unpaged list may hold more ids than a statement may bind. */
const LOAD_CHUNK = 500

/**
 * A list over root records (sessions, messages, …) whose full form may join child rows
 * (status history, …). The root table's primary key column must be `id`.
 */
export interface RootListQuery<A> {
  readonly table: string
  /** Filters on the root table only. */
  readonly where: Fragment
  /** Must be total (end with `id`) so pages never overlap or skip records. */
  readonly orderBy: Fragment
  readonly page: Option.Option<PageRequest>
  /** The full records of exactly these ids, children included, in any order. */
  readonly loadByIds: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>, SqlError>
  readonly idOf: (record: A) => string
}

/**
 * Pagination rules 8–11: LIMIT/OFFSET apply to the root ids alone (never to a join, where one
 * record with several child rows would eat several slots of a page); the full records are then
 * loaded for exactly those ids and put back in the ids' order; `total` counts root records with
 * the same filter. Without a page request everything is returned, so the count is the length.
 * One transaction, so the ids, the records and the total describe the same moment.
 */
export const listByRootIds = <A>(
  sql: SqlClient.SqlClient,
  query: RootListQuery<A>
): Effect.Effect<Page<A>, SqlError> =>
  Effect.gen(function*() {
    const window = Option.match(query.page, {
      onNone: () => sql.literal(""),
      onSome: (page) => sql`LIMIT ${page.limit} OFFSET ${offsetOf(page)}`
    })
    const idRows = yield* sql<{ readonly id: string }>`SELECT id FROM ${sql(query.table)}
      WHERE ${query.where} ORDER BY ${query.orderBy} ${window}`
    const ids = idRows.map((row) => row.id)

    const records = (yield* Effect.forEach(Arr.chunksOf(ids, LOAD_CHUNK), query.loadByIds)).flat()
    const byId = new Map(records.map((record) => [query.idOf(record), record]))
    const items = ids.flatMap((id) => {
      const record = byId.get(id)
      return record === undefined ? [] : [record]
    })

    const total = Option.isNone(query.page)
      ? ids.length
      : yield* sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM ${sql(query.table)}
          WHERE ${query.where}`.pipe(Effect.map(([row]) => fromCount(row?.total)))

    return { items, total }
  }).pipe(sql.withTransaction)
