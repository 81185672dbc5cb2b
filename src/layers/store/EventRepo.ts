import { EventRepo, type EventFilter } from "../../runtime/ports/store/EventRepo.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { DomainEvent, EventKind } from "../../domain/Events.js"
import { fromJsonColumn, toIntegerBoolean } from "./columns.js"
import { storeOperation } from "./storeFailure.js"

export interface EventRecord {
  readonly id: string
  readonly session_id: string
  readonly kind: EventKind
  readonly at: string
  readonly data: string
}

// What the outbox holds was made by `makeEvent`: its data is the one the kind carries.
export const toEvent = (record: EventRecord): DomainEvent => ({
  id: record.id,
  event: record.kind,
  sessionId: record.session_id,
  timestamp: record.at,
  data: fromJsonColumn<unknown>(record.data)
}) as DomainEvent

/**
 * The outbox: every domain event, in id order (UUID v7: time, then creation order). Appending
 * joins the caller's transaction, so an event exists exactly when the change it announces does.
 */
export const SqlEventRepo = Layer.effect(
  EventRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (events: ReadonlyArray<DomainEvent>, dispatched: boolean) =>
      events.length === 0 ? Effect.void : sql`INSERT INTO events ${sql.insert(events.map((event) => ({
        id: event.id,
        session_id: event.sessionId,
        kind: event.event,
        at: event.timestamp,
        data: JSON.stringify(event.data ?? null),
        dispatched: toIntegerBoolean(dispatched)
      })))}`

    const appendAll = storeOperation((events: ReadonlyArray<DomainEvent>) => insert(events, false), Effect.asVoid)

    /** An event that is never fanned out (a webhook test, delivered to its one webhook by the dispatcher). */
    const appendDispatched = storeOperation((event: DomainEvent) => insert([event], true), Effect.asVoid)

    /** The oldest events not yet handed to the webhooks, oldest first. */
    const undispatched = storeOperation(
      (limit: number) =>
        sql<EventRecord>`SELECT id, session_id, kind, at, data FROM events WHERE dispatched = 0 ORDER BY id LIMIT ${limit}`.pipe(
          Effect.map((records) => records.map(toEvent))
        ))

    const markDispatched = storeOperation(
      (ids: ReadonlyArray<string>) =>
        ids.length === 0 ? Effect.void : Effect.asVoid(sql`UPDATE events SET dispatched = 1 WHERE id IN ${sql.in(ids)}`))

    /** With no webhook to fan out to, what was waiting is marked as it stands: no row is read or parsed. */
    const markOldestDispatched = storeOperation(
      (limit: number) =>
        sql<{ readonly id: string }>`UPDATE events SET dispatched = 1
          WHERE id IN (SELECT id FROM events WHERE dispatched = 0 ORDER BY id LIMIT ${limit}) AND dispatched = 0 RETURNING id`.pipe(
          Effect.map((rows) => rows.length)
        ))

    /** Events after `afterId` (exclusive) matching the filter, oldest first: a live stream's replay. */
    const after = storeOperation(
      (afterId: string, filter: EventFilter, limit: number) => {
        const conditions = [sql`id > ${afterId}`]
        if (filter.sessionId !== undefined) conditions.push(sql`session_id = ${filter.sessionId}`)
        if (filter.kinds !== undefined && filter.kinds.length > 0) conditions.push(sql`kind IN ${sql.in(filter.kinds)}`)
        return sql<EventRecord>`SELECT id, session_id, kind, at, data FROM events WHERE ${sql.and(conditions)} ORDER BY id LIMIT ${limit}`.pipe(
          Effect.map((records) => records.map(toEvent))
        )
      })

    const find = storeOperation(
      (id: string) =>
        sql<EventRecord>`SELECT id, session_id, kind, at, data FROM events WHERE id = ${id}`.pipe(
          Effect.map((records) => records.map(toEvent)[0])
        ))

    /** Drops dispatched events older than `before` (ISO time): the outbox's retention. */
    const prune = storeOperation(
      (before: string) =>
        sql<{ readonly id: string }>`DELETE FROM events WHERE dispatched = 1 AND at < ${before} RETURNING id`.pipe(
          Effect.map((rows) => rows.length)
        ))

    /**
     * `prune`, sparing the events that pending deliveries still have to send: a webhook with
     * many attempts can retry for longer than the retention.
     */
    const pruneSettled = storeOperation(
      (before: string) =>
        sql<{ readonly id: string }>`DELETE FROM events WHERE dispatched = 1 AND at < ${before}
          AND id NOT IN (SELECT event_id FROM webhook_deliveries WHERE status = ${"pending"}) RETURNING id`.pipe(
          Effect.map((rows) => rows.length)
        ))

    return { appendAll, appendDispatched, undispatched, markDispatched, markOldestDispatched, after, find, prune, pruneSettled } as const
  })
)
