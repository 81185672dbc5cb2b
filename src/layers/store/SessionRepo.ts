import { SessionRepo, type SessionRow, type SessionPatch, type SessionFilter } from "../../runtime/ports/store/SessionRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { DateTime, Effect, Layer, Option } from "effect"
import { SessionNameTaken } from "../../domain/Errors.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import type { EngineName, LastError, SessionStatus } from "../../domain/Session.js"
import type { SessionSettings } from "../../domain/SessionSettings.js"
import { fromCount, fromIntegerBoolean, fromJsonColumn, isUniqueViolation, toIntegerBoolean, toJsonColumn } from "./columns.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"
import { makeReadCache } from "./readCache.js"

interface SessionRecord {
  readonly id: string
  readonly name: string
  readonly engine: EngineName
  readonly status: SessionStatus
  readonly desired_running: unknown
  readonly phone: string | null
  readonly push_name: string | null
  readonly lid: string | null
  readonly proxy_url: string | null
  readonly last_error: string | null
  readonly settings: string | null
  readonly created_at: string
  readonly updated_at: string
}

const fromRecord = (record: SessionRecord): SessionRow => ({
  id: record.id,
  name: record.name,
  engine: record.engine,
  status: record.status,
  desiredRunning: fromIntegerBoolean(record.desired_running),
  phone: record.phone,
  pushName: record.push_name,
  lid: record.lid,
  proxyUrl: record.proxy_url,
  lastError: fromJsonColumn<LastError>(record.last_error),
  settings: fromJsonColumn<SessionSettings>(record.settings),
  createdAt: record.created_at,
  updatedAt: record.updated_at
})

/** Column and stored value of each patchable field. */
const patchColumns: { readonly [K in keyof Required<SessionPatch>]: (value: Required<SessionPatch>[K]) => readonly [string, unknown] } = {
  status: (status) => ["status", status],
  desiredRunning: (desired) => ["desired_running", toIntegerBoolean(desired)],
  phone: (phone) => ["phone", phone],
  pushName: (pushName) => ["push_name", pushName],
  lid: (lid) => ["lid", lid],
  proxyUrl: (proxyUrl) => ["proxy_url", proxyUrl],
  lastError: (lastError) => ["last_error", toJsonColumn(lastError)],
  settings: (settings) => ["settings", toJsonColumn(settings)]
}

const toColumns = (patch: SessionPatch): Record<string, unknown> =>
  Object.fromEntries(
    (Object.keys(patch) as Array<keyof SessionPatch>).flatMap((key) => {
      const value = patch[key]
      return value === undefined ? [] : [(patchColumns[key] as (value: unknown) => readonly [string, unknown])(value)]
    })
  )

const nameTaken = (name: string) => new SessionNameTaken({ name })

/** Sessions, oldest first. Their engine auth and messages are owned by the other repositories. */
export const SqlSessionRepo = Layer.effect(
  SessionRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const selectOne = (condition: Fragment) =>
      sql<SessionRecord>`SELECT * FROM sessions WHERE ${condition}`.pipe(
        Effect.map((records) => Option.map(Option.fromNullable(records[0]), fromRecord))
      )

    // Every send reads its session (does it accept sends, what is its phone): kept between changes.
    const cache = makeReadCache<Option.Option<SessionRow>>(sql)

    const findById = storeOperation(
      (id: string) => cache.read(id, "row", selectOne(sql`id = ${id}`), Option.isSome))

    const findByName = storeOperation(
      (name: string) => selectOne(sql`name = ${name}`))

    const insertRow = (row: SessionRow) =>
      sql`INSERT INTO sessions ${
        sql.insert({
          id: row.id,
          name: row.name,
          engine: row.engine,
          status: row.status,
          desired_running: toIntegerBoolean(row.desiredRunning),
          phone: row.phone,
          push_name: row.pushName,
          lid: row.lid,
          proxy_url: row.proxyUrl,
          last_error: toJsonColumn(row.lastError),
          settings: toJsonColumn(row.settings),
          created_at: row.createdAt,
          updated_at: row.updatedAt
        })
      }`

    /**
     * The name check runs in the same transaction as the insert; a concurrent writer that slips
     * in between (another process on Postgres) trips the UNIQUE constraint, reported the same way.
     */
    const insert = (row: SessionRow) =>
      Effect.gen(function*() {
        if (Option.isSome(yield* selectOne(sql`name = ${row.name}`))) return yield* nameTaken(row.name)
        yield* insertRow(row)
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", (error) => Effect.fail(isUniqueViolation(error) ? nameTaken(row.name) : error)),
        orStoreUnavailable
      )

    const list = Effect.fn("SessionRepo.list")(
      (filter: SessionFilter, page: Option.Option<PageRequest>): Effect.Effect<Page<SessionRow>, SqlError> =>
        listByRootIds(sql, {
          table: "sessions",
          where: sql.and([
            ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
            ...(filter.only === undefined
              ? []
              : filter.only.length === 0
              ? [sql.literal("1 = 0")]
              : [sql.or([sql`id IN ${sql.in(filter.only)}`, sql`name IN ${sql.in(filter.only)}`])])
          ]),
          orderBy: sql.literal("created_at ASC, id ASC"),
          page,
          loadByIds: (ids) => sql<SessionRecord>`SELECT * FROM sessions WHERE id IN ${sql.in(ids)}`,
          idOf: (record) => record.id
        }).pipe(Effect.map(({ items, total }) => ({ items: items.map(fromRecord), total }))),
      orStoreUnavailable
    )

    const listDesiredRunning = storeOperation(
      () =>
        sql<SessionRecord>`SELECT * FROM sessions WHERE desired_running = 1 ORDER BY created_at ASC, id ASC`.pipe(
          Effect.map((records) => records.map(fromRecord))
        ))

    /** Sessions are few: one aggregate of their table is cheap, and always agrees with the API. */
    const countByStatus = storeOperation(
      () =>
        sql<{ readonly status: SessionStatus; readonly count: unknown }>`SELECT status, COUNT(*) AS count FROM sessions GROUP BY status`.pipe(
          Effect.map((rows): ReadonlyMap<SessionStatus, number> => new Map(rows.map((row) => [row.status, fromCount(row.count)])))
        ))

    /** Applies the fields present in `patch` and bumps `updated_at`. */
    const write = (id: string, patch: SessionPatch) =>
      Effect.gen(function*() {
        const updatedAt = DateTime.formatIso(yield* DateTime.now)
        yield* cache.invalidate(id)
        yield* sql`UPDATE sessions SET ${sql.update({ ...toColumns(patch), updated_at: updatedAt })} WHERE id = ${id}`
      })

    /** `write`, and the new row. */
    const update = Effect.fnUntraced(
      function*(id: string, patch: SessionPatch) {
        yield* write(id, patch)
        return yield* selectOne(sql`id = ${id}`)
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const patch = storeOperation(write)

    const setStatusOfMany = Effect.fnUntraced(
      function*(ids: ReadonlyArray<string>, status: SessionStatus) {
        if (ids.length === 0) return
        const updatedAt = DateTime.formatIso(yield* DateTime.now)
        for (const id of ids) yield* cache.invalidate(id)
        yield* sql`UPDATE sessions SET status = ${status}, updated_at = ${updatedAt} WHERE id IN ${sql.in(ids)} AND desired_running = 1`
      },
      orStoreUnavailable
    )

    /** Children first, so foreign keys hold at every statement. */
    const remove = Effect.fnUntraced(
      function*(id: string) {
        yield* cache.invalidate(id)
        yield* sql`DELETE FROM message_status_history
          WHERE message_id IN (SELECT id FROM messages WHERE session_id = ${id})`
        for (const children of ["message_reactions", "poll_votes"]) {
          yield* sql`DELETE FROM ${sql(children)} WHERE message_id IN (SELECT id FROM messages WHERE session_id = ${id})`
        }
        yield* sql`DELETE FROM messages WHERE session_id = ${id}`
        yield* sql`DELETE FROM engine_auth WHERE session_id = ${id}`
        for (const table of ["group_participants", "chat_groups", "channels", "chat_labels", "labels", "contacts", "presence", "chats"]) {
          yield* sql`DELETE FROM ${sql(table)} WHERE session_id = ${id}`
        }
        yield* sql`DELETE FROM batches WHERE session_id = ${id}`
        const deleted = yield* sql<{ readonly id: string }>`DELETE FROM sessions WHERE id = ${id} RETURNING id`
        return deleted.length > 0
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    return { insert, findById, findByName, list, listDesiredRunning, countByStatus, update, patch, setStatusOfMany, remove } as const
  })
)
