import { WebhookRepo, type WebhookRow, type WebhookScope } from "../../runtime/ports/store/WebhookRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Layer, Option } from "effect"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { fromIntegerBoolean, fromJsonColumn, toIntegerBoolean } from "./columns.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

interface WebhookRecord {
  readonly id: string
  readonly session_id: string | null
  readonly url: string
  readonly events: string
  readonly enabled: unknown
  readonly headers: string
  readonly max_attempts: unknown
  readonly secret: string
  readonly disabled_reason: string | null
  readonly created_at: string
  readonly updated_at: string
}

const fromRecord = (record: WebhookRecord): WebhookRow => ({
  id: record.id,
  sessionId: record.session_id,
  url: record.url,
  events: fromJsonColumn<ReadonlyArray<string>>(record.events) ?? ["*"],
  enabled: fromIntegerBoolean(record.enabled),
  headers: fromJsonColumn<Record<string, string>>(record.headers) ?? {},
  maxAttempts: Number(record.max_attempts),
  secret: record.secret,
  disabledReason: record.disabled_reason,
  createdAt: record.created_at,
  updatedAt: record.updated_at
})

/**
 * How long the copy of every webhook (`cached`, which the fan-out matches events against) is
 * trusted. Changes made through this repository drop it at once; this bounds how long a change
 * made by another runner of a cluster goes unseen when its notification (`CachedCopies`, topic `webhooks`) is lost.
 */
const COPY_TTL_MS = 1_000

export const SqlWebhookRepo = Layer.effect(
  WebhookRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The copy's age is read from the Effect clock in `all` and in the synchronous `kept` alike,
    // so under a TestClock a copy read is kept, and expires, on the test's time.
    const clock = yield* Effect.clock

    /**
     * Every webhook, read once and kept: the fan-out matches each event against it instead of a
     * query per event. `generation` counts the changes, so a read that raced a change is not kept.
     */
    let copy: { readonly rows: ReadonlyArray<WebhookRow>; readonly readAt: number } | undefined
    let generation = 0
    const forget = Effect.sync(() => {
      copy = undefined
      generation++
    })
    /** The kept copy while it is trusted; `undefined` when it must be read afresh. */
    const kept = () => (copy !== undefined && clock.unsafeCurrentTimeMillis() - copy.readAt < COPY_TTL_MS ? copy.rows : undefined)
    const all = Effect.gen(function*() {
      const fresh = kept()
      if (fresh !== undefined) return fresh
      const readAt = clock.unsafeCurrentTimeMillis()
      const readFor = generation
      const rows = (yield* sql<WebhookRecord>`SELECT * FROM webhooks ORDER BY id`).map(fromRecord)
      if (readFor === generation) copy = { rows, readAt }
      return rows
    })
    const changing = <A, E, R>(change: Effect.Effect<A, E, R>) => Effect.ensuring(change, forget)

    const load = (ids: ReadonlyArray<string>): Effect.Effect<Array<WebhookRow>, SqlError> =>
      Effect.map(sql<WebhookRecord>`SELECT * FROM webhooks WHERE id IN ${sql.in(ids)}`, (records) => records.map(fromRecord))

    const insert = storeOperation(
      (row: WebhookRow) =>
        changing(sql`INSERT INTO webhooks ${sql.insert({
          id: row.id,
          session_id: row.sessionId,
          url: row.url,
          events: JSON.stringify(row.events),
          enabled: toIntegerBoolean(row.enabled),
          headers: JSON.stringify(row.headers),
          max_attempts: row.maxAttempts,
          secret: row.secret,
          disabled_reason: row.disabledReason,
          created_at: row.createdAt,
          updated_at: row.updatedAt
        })}`), Effect.asVoid)

    const find = storeOperation(
      (id: string) => Effect.map(load([id]), (rows) => Option.fromNullable(rows[0])))

    const list = Effect.fn("WebhookRepo.list")(
      (scope: WebhookScope, page: Option.Option<PageRequest>): Effect.Effect<Page<WebhookRow>, SqlError> =>
        listByRootIds(sql, {
          table: "webhooks",
          where: "global" in scope ? sql`session_id IS NULL` : sql`session_id = ${scope.sessionId}`,
          orderBy: sql.literal("created_at ASC, id ASC"),
          page,
          loadByIds: load,
          idOf: (row) => row.id
        }),
      orStoreUnavailable
    )

    const update = storeOperation(
      (id: string, fields: { readonly [K in "url" | "events" | "enabled" | "headers" | "maxAttempts" | "disabledReason"]?: WebhookRow[K] | undefined }) =>
        Effect.flatMap(DateTime.now, (now) => sql`UPDATE webhooks SET ${sql.update({
          ...(fields.url === undefined ? {} : { url: fields.url }),
          ...(fields.events === undefined ? {} : { events: JSON.stringify(fields.events) }),
          ...(fields.enabled === undefined ? {} : { enabled: toIntegerBoolean(fields.enabled) }),
          ...(fields.headers === undefined ? {} : { headers: JSON.stringify(fields.headers) }),
          ...(fields.maxAttempts === undefined ? {} : { max_attempts: fields.maxAttempts }),
          ...(fields.disabledReason === undefined ? {} : { disabled_reason: fields.disabledReason }),
          updated_at: DateTime.formatIso(now)
        })} WHERE id = ${id}`), changing, Effect.asVoid)

    /** The webhook with its deliveries and their attempts. */
    const remove = Effect.fnUntraced(
      function*(id: string) {
        yield* sql`DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE webhook_id = ${id})`
        yield* sql`DELETE FROM webhook_deliveries WHERE webhook_id = ${id}`
        const deleted = yield* sql<{ readonly id: string }>`DELETE FROM webhooks WHERE id = ${id} RETURNING id`
        return deleted.length > 0
      },
      sql.withTransaction,
      changing,
      orStoreUnavailable
    )

    /** Every webhook, enabled or not, from the kept copy. */
    const cached = storeOperation(() => all)

    return { insert, find, list, update, remove, cached, kept, forget } as const
  })
)
