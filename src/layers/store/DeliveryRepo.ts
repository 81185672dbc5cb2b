import {
  type AttemptOutcome,
  type DueDelivery,
  type DueRoom,
  DeliveryRepo,
  type NewDeliveries
} from "../../runtime/ports/store/DeliveryRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Array as Arr, Effect, Layer, Option } from "effect"
import { uuidv7 } from "../../domain/uuidv7.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import type { Delivery, DeliveryAttempt, DeliveryStatus } from "../../domain/Webhook.js"
import { type EventRecord, toEvent } from "./EventRepo.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

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

/** Rows per multi-row statement: far below SQLite's and Postgres' limits on bound parameters. */
const CHUNK = 500

/** Webhooks per claiming statement: one sub-select each, far below SQLite's 500 terms of a compound select. */
const WEBHOOKS_PER_CLAIM = 100

/** A due delivery's row joined with its event's (the event's columns null when it is no longer kept). */
interface DueRecord extends Pick<DeliveryRecord, "id" | "webhook_id" | "event_id" | "attempts">, Partial<Omit<EventRecord, "id">> {}

const toDueDelivery = (record: DueRecord): DueDelivery => ({
  id: record.id,
  webhookId: record.webhook_id,
  eventId: record.event_id,
  attempts: Number(record.attempts),
  event: record.kind === undefined || record.kind === null
    ? undefined
    : toEvent({ id: record.event_id, session_id: record.session_id!, kind: record.kind, at: record.at!, data: record.data! })
})

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

    /** New pending deliveries of events to their webhooks, due at `at`: one INSERT per `CHUNK` rows. */
    const createMany = Effect.fnUntraced(
      function*(batch: ReadonlyArray<NewDeliveries>, at: string) {
        const rows = batch.flatMap(({ event, webhookIds }) =>
          webhookIds.map((webhookId) => ({
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
        )
        for (const chunk of Arr.chunksOf(rows, CHUNK)) yield* sql`INSERT INTO webhook_deliveries ${sql.insert(chunk)}`
        return rows.map((row) => row.id)
      },
      orStoreUnavailable
    )

    /** New pending deliveries of an event to these webhooks, due at `at`. */
    const create = (event: NewDeliveries["event"], webhookIds: ReadonlyArray<string>, at: string) => createMany([{ event, webhookIds }], at)

    /**
     * The webhooks that have a pending delivery due at `now`: each webhook id of the deliveries
     * found by hopping along `webhook_deliveries_webhook_due_idx` (a seek per webhook, however
     * long its history or its backlog), then one seek for a due pending one of it.
     */
    const webhooksWithDue = (now: string) =>
      sql<{ readonly id: string }>`WITH RECURSIVE hooks(id) AS (
          SELECT MIN(webhook_id) FROM webhook_deliveries
          UNION ALL
          SELECT (SELECT MIN(d.webhook_id) FROM webhook_deliveries d WHERE d.webhook_id > hooks.id) FROM hooks WHERE hooks.id IS NOT NULL
        )
        SELECT hooks.id FROM hooks WHERE hooks.id IS NOT NULL AND EXISTS (
          SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = hooks.id AND d.status = ${"pending"} AND d.next_attempt_at <= ${now})`.pipe(
        Effect.map((rows) => new Set(rows.map((row) => row.id)))
      )

    /**
     * Pending deliveries whose time has come, oldest first: of each webhook named, up to its
     * room and without those it holds already, so that one slow receiver's backlog cannot fill
     * the page and hide the others' deliveries. Each webhook's are one range scan of
     * `webhook_deliveries_webhook_due_idx`, the webhooks' put together in one statement (a
     * chunk of them). Each comes with its event, so an attempt reads nothing more. With more
     * webhooks than one statement takes, only those with a due delivery are asked: most of a
     * thousand webhooks have nothing due at any moment.
     */
    const due = storeOperation((now: string, limit: number, rooms: ReadonlyArray<DueRoom>) => {
      const withRoom = rooms.filter((each) => each.room > 0)
      if (withRoom.length <= WEBHOOKS_PER_CLAIM) return dueOf(now, limit, withRoom)
      return Effect.flatMap(webhooksWithDue(now), (withDue) => dueOf(now, limit, withRoom.filter((each) => withDue.has(each.webhookId))))
    })
    const dueOf = (now: string, limit: number, wanted: ReadonlyArray<DueRoom>) => {
      const ofWebhook = (each: DueRoom, index: number) => {
        const conditions = [sql`webhook_id = ${each.webhookId}`, sql`status = ${"pending"}`, sql`next_attempt_at <= ${now}`]
        if (each.except.length > 0) conditions.push(sql`id NOT IN ${sql.in(each.except)}`)
        return sql`SELECT * FROM (SELECT id, webhook_id, event_id, attempts, next_attempt_at FROM webhook_deliveries
          WHERE ${sql.and(conditions)} ORDER BY next_attempt_at, id LIMIT ${Math.min(each.room, limit)}) ${sql.literal(`w${index}`)}`
      }
      const chunk = (rooms: ReadonlyArray<DueRoom>) =>
        sql<DueRecord & { readonly next_attempt_at: string }>`SELECT r.id, r.webhook_id, r.event_id, r.attempts, r.next_attempt_at, e.session_id, e.kind, e.at, e.data
          FROM (${sql.join(" UNION ALL ", false)(rooms.map(ofWebhook))}) r LEFT JOIN events e ON e.id = r.event_id
          ORDER BY r.next_attempt_at, r.id LIMIT ${limit}`
      return Effect.map(Effect.forEach(Arr.chunksOf(wanted, WEBHOOKS_PER_CLAIM), chunk), (chunks) => {
        const records = chunks.flat()
        if (chunks.length > 1) records.sort((a, b) => (a.next_attempt_at < b.next_attempt_at ? -1 : a.next_attempt_at > b.next_attempt_at ? 1 : a.id < b.id ? -1 : 1))
        return records.slice(0, limit).map(toDueDelivery)
      })
    }

    /** The time of the pending delivery due next, if any: the dispatcher sleeps until then. */
    const nextDue = storeOperation(
      () =>
        sql<{ readonly next: string | null }>`SELECT MIN(next_attempt_at) AS next FROM webhook_deliveries WHERE status = ${"pending"}`.pipe(
          Effect.map(([row]) => Option.fromNullable(row?.next))
        ))

    /**
     * Many outcomes at once: their attempt log rows in one INSERT, and one UPDATE for each
     * distinct outcome (a burst of successful first attempts is one statement).
     */
    const recordAttempts = Effect.fnUntraced(
      function*(outcomes: ReadonlyArray<{ readonly deliveryId: string; readonly outcome: AttemptOutcome }>) {
        const attemptRows = outcomes.map(({ deliveryId, outcome: { attempt } }) => ({
          delivery_id: deliveryId,
          attempt: attempt.attempt,
          at: attempt.at,
          status_code: attempt.statusCode,
          error: attempt.error,
          duration_ms: attempt.durationMs
        }))
        // An attempt already logged (a delivery attempted twice with one number) is logged once,
        // not a failure of the whole batch, and the first outcome of that number stands.
        for (const chunk of Arr.chunksOf(attemptRows, CHUNK)) yield* sql`INSERT INTO webhook_attempts ${sql.insert(chunk)} ON CONFLICT DO NOTHING`
        const sameOutcome = Arr.groupBy(outcomes, ({ outcome }) =>
          JSON.stringify([outcome.status, outcome.attempt.attempt, outcome.nextAttemptAt, outcome.attempt.statusCode, outcome.attempt.error]))
        for (const group of Object.values(sameOutcome)) {
          const { outcome } = group[0]!
          // The group's latest attempt: the rows changed within the same few milliseconds.
          const updatedAt = group.reduce((latest, { outcome: { attempt } }) => (attempt.at > latest ? attempt.at : latest), outcome.attempt.at)
          for (const chunk of Arr.chunksOf(group, CHUNK)) {
            yield* sql`UPDATE webhook_deliveries SET ${sql.update({
              status: outcome.status,
              attempts: outcome.attempt.attempt,
              next_attempt_at: outcome.nextAttemptAt,
              last_status_code: outcome.attempt.statusCode,
              last_error: outcome.attempt.error,
              updated_at: updatedAt
            })} WHERE id IN ${sql.in(chunk.map(({ deliveryId }) => deliveryId))} AND attempts < ${outcome.attempt.attempt}`
          }
        }
      },
      orStoreUnavailable
    )

    const find = storeOperation(
      (id: string) => Effect.map(load([id]), (found) => Option.fromNullable(found[0])))

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
    const redeliver = storeOperation(
      (id: string, at: string) =>
        sql`UPDATE webhook_deliveries SET ${sql.update({ status: "pending", next_attempt_at: at, updated_at: at })} WHERE id = ${id}`, Effect.asVoid)

    /** Gives a pending delivery up without an attempt (its webhook is off, or its event is gone), saying why. */
    const abandon = storeOperation(
      (id: string, reason: string, at: string) =>
        sql`UPDATE webhook_deliveries SET ${sql.update({ status: "failed", next_attempt_at: null, last_error: reason, updated_at: at })}
          WHERE id = ${id} AND status = ${"pending"}`, Effect.asVoid)

    return { create, createMany, due, nextDue, recordAttempts, find, list, redeliver, abandon } as const
  })
)
