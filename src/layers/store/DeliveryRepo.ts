import { DeliveryRepo, type DueExclusions, type AttemptOutcome } from "../../runtime/ports/store/DeliveryRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Array as Arr, Effect, Layer, Option } from "effect"
import { uuidv7 } from "../../domain/uuidv7.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import type { Delivery, DeliveryAttempt, DeliveryStatus } from "../../domain/Webhook.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable } from "./storeFailure.js"

interface DeliveryRecord {
  readonly id: string
  readonly webhook_id: string
  readonly event_id: string
  readonly event_kind: string
  readonly status: DeliveryStatus
  readonly attempts: unknown
  readonly next_attempt_at: string | null
  readonly last_status_code: unknown
  readonly last_error: string | null
  readonly created_at: string
  readonly updated_at: string
}

interface AttemptRecord {
  readonly delivery_id: string
  readonly attempt: unknown
  readonly at: string
  readonly status_code: unknown
  readonly error: string | null
  readonly duration_ms: unknown
}

const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value))

const toDelivery = (record: DeliveryRecord, attempts: ReadonlyArray<AttemptRecord>): Delivery => ({
  id: record.id,
  webhookId: record.webhook_id,
  eventId: record.event_id,
  event: record.event_kind,
  status: record.status,
  attempts: Number(record.attempts),
  nextAttemptAt: record.next_attempt_at,
  lastStatusCode: numberOrNull(record.last_status_code),
  lastError: record.last_error,
  createdAt: record.created_at,
  updatedAt: record.updated_at,
  attemptLog: [...attempts]
    .sort((a, b) => Number(a.attempt) - Number(b.attempt))
    .map((a): DeliveryAttempt => ({
      attempt: Number(a.attempt),
      at: a.at,
      statusCode: numberOrNull(a.status_code),
      error: a.error,
      durationMs: Number(a.duration_ms)
    }))
})

/**
 * One delivery per (event, webhook), created when the event is dispatched; every attempt is
 * recorded with its status code, error and duration.
 */
export const SqlDeliveryRepo = Layer.effect(
  DeliveryRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const load = (ids: ReadonlyArray<string>): Effect.Effect<Array<Delivery>, SqlError> =>
      Effect.gen(function*() {
        const records = yield* sql<DeliveryRecord>`SELECT * FROM webhook_deliveries WHERE id IN ${sql.in(ids)}`
        const attempts = yield* sql<AttemptRecord>`SELECT * FROM webhook_attempts WHERE delivery_id IN ${sql.in(ids)}`
        const of = Arr.groupBy(attempts, (a) => a.delivery_id)
        return records.map((record) => toDelivery(record, of[record.id] ?? []))
      })

    /** New pending deliveries of an event to these webhooks, due at `at`. */
    const create = Effect.fn("DeliveryRepo.create")(
      (event: { readonly id: string; readonly event: string }, webhookIds: ReadonlyArray<string>, at: string) =>
        webhookIds.length === 0
          ? Effect.succeed<ReadonlyArray<string>>([])
          : Effect.gen(function*() {
            const rows = webhookIds.map((webhookId) => ({
              id: uuidv7(Date.parse(at)),
              webhook_id: webhookId,
              event_id: event.id,
              event_kind: event.event,
              status: "pending",
              attempts: 0,
              next_attempt_at: at,
              last_status_code: null,
              last_error: null,
              created_at: at,
              updated_at: at
            }))
            yield* sql`INSERT INTO webhook_deliveries ${sql.insert(rows)}`
            return rows.map((row) => row.id)
          }),
      orStoreUnavailable
    )

    /**
     * Pending deliveries whose time has come, oldest first; without those `except` names (in
     * flight, or to webhooks that have all they may have in flight), so that one slow
     * receiver's backlog cannot fill the page and hide the others' deliveries.
     */
    const due = Effect.fn("DeliveryRepo.due")(
      (now: string, limit: number, except: DueExclusions = {}) => {
        const conditions = [sql`status = ${"pending"}`, sql`next_attempt_at <= ${now}`]
        if (except.webhookIds !== undefined && except.webhookIds.length > 0) conditions.push(sql`webhook_id NOT IN ${sql.in(except.webhookIds)}`)
        if (except.deliveryIds !== undefined && except.deliveryIds.length > 0) conditions.push(sql`id NOT IN ${sql.in(except.deliveryIds)}`)
        return sql<DeliveryRecord>`SELECT * FROM webhook_deliveries WHERE ${sql.and(conditions)}
          ORDER BY next_attempt_at, id LIMIT ${limit}`.pipe(Effect.map((records) => records.map((record) => toDelivery(record, []))))
      },
      orStoreUnavailable
    )

    /** The time of the pending delivery due next, if any: the dispatcher sleeps until then. */
    const nextDue = Effect.fn("DeliveryRepo.nextDue")(
      () =>
        sql<{ readonly next: string | null }>`SELECT MIN(next_attempt_at) AS next FROM webhook_deliveries WHERE status = ${"pending"}`.pipe(
          Effect.map(([row]) => Option.fromNullable(row?.next))
        ),
      orStoreUnavailable
    )

    const recordAttempt = Effect.fn("DeliveryRepo.recordAttempt")(
      function*(deliveryId: string, outcome: AttemptOutcome) {
        const { attempt } = outcome
        yield* sql`INSERT INTO webhook_attempts ${sql.insert({
          delivery_id: deliveryId,
          attempt: attempt.attempt,
          at: attempt.at,
          status_code: attempt.statusCode,
          error: attempt.error,
          duration_ms: attempt.durationMs
        })}`
        yield* sql`UPDATE webhook_deliveries SET ${sql.update({
          status: outcome.status,
          attempts: attempt.attempt,
          next_attempt_at: outcome.nextAttemptAt,
          last_status_code: attempt.statusCode,
          last_error: attempt.error,
          updated_at: attempt.at
        })} WHERE id = ${deliveryId}`
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const find = Effect.fn("DeliveryRepo.find")(
      (id: string) => Effect.map(load([id]), (found) => Option.fromNullable(found[0])),
      orStoreUnavailable
    )

    /** Newest first; paged on deliveries, each with all its attempts (rule 11). */
    const list = Effect.fn("DeliveryRepo.list")(
      (webhookId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<Delivery>, SqlError> =>
        listByRootIds(sql, {
          table: "webhook_deliveries",
          where: sql`webhook_id = ${webhookId}`,
          orderBy: sql.literal("created_at DESC, id DESC"),
          page,
          loadByIds: load,
          idOf: (delivery) => delivery.id
        }),
      orStoreUnavailable
    )

    /** Sends it again: pending, due now; its attempts keep counting. */
    const redeliver = Effect.fn("DeliveryRepo.redeliver")(
      (id: string, at: string) =>
        sql`UPDATE webhook_deliveries SET ${sql.update({ status: "pending", next_attempt_at: at, updated_at: at })} WHERE id = ${id}`,
      Effect.asVoid,
      orStoreUnavailable
    )

    /** Gives a pending delivery up without an attempt (its webhook is off, or its event is gone), saying why. */
    const abandon = Effect.fn("DeliveryRepo.abandon")(
      (id: string, reason: string, at: string) =>
        sql`UPDATE webhook_deliveries SET ${sql.update({ status: "failed", next_attempt_at: null, last_error: reason, updated_at: at })}
          WHERE id = ${id} AND status = ${"pending"}`,
      Effect.asVoid,
      orStoreUnavailable
    )

    return { create, due, nextDue, recordAttempt, find, list, redeliver, abandon } as const
  })
)
