import { Store } from "../ports/store/Store.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { EventRepo } from "../ports/store/EventRepo.js"
import { Events, makeEventBus } from "../Events.js"
import { type DomainEvent } from "../../domain/Events.js"
import { listenScoped, notify, postgresOf } from "./postgresChannel.js"

/** The Postgres channel every runner listens on. */
const CHANNEL = "switchboard_events"
/** Postgres refuses notification payloads from 8000 bytes; a larger event goes by its id. */
const PAYLOAD_MAX_BYTES = 7_900

/**
 * A notification is an event this gateway wrote itself (or its id): it is parsed, not decoded
 * with the schema, since every runner reads every event and the schema's cost would grow with
 * the number of runners.
 */
const readNotification = (payload: string): DomainEvent | { readonly id: string } | undefined => {
  try {
    const value: unknown = JSON.parse(payload)
    if (typeof value !== "object" || value === null || typeof (value as { id?: unknown }).id !== "string") return undefined
    return value as DomainEvent | { readonly id: string }
  } catch {
    return undefined
  }
}

/**
 * Events in a cluster. Publishing writes the outbox as in one process, and announces the event
 * with `pg_notify` in the same transaction: Postgres hands it to every runner's listener when
 * (and only if) the change it announces commits. So the live feed of any runner (the SSE
 * stream, the webhook dispatcher's wake-up) carries the events of sessions on every runner.
 * A listener that reconnects misses what was announced meanwhile; the outbox still has it
 * (SSE clients resume with `Last-Event-ID`, webhooks are delivered from the outbox).
 */
export const ClusterEventsLive: Layer.Layer<Events, never, EventRepo | Store | SqlClient.SqlClient> = Layer.scoped(
  Events,
  Effect.gen(function*() {
    const outbox = yield* EventRepo
    const store = yield* Store
    const sql = yield* SqlClient.SqlClient
    const pg = yield* postgresOf(sql)
    const everywhere = yield* makeEventBus
    const here = yield* makeEventBus

    const announce = (event: DomainEvent) => {
      const whole = JSON.stringify(event)
      const payload = Buffer.byteLength(whole) <= PAYLOAD_MAX_BYTES ? whole : JSON.stringify({ id: event.id })
      return notify(sql, CHANNEL, payload)
    }

    const received = (payload: string) =>
      Effect.gen(function*() {
        const notification = readNotification(payload)
        if (notification === undefined) return yield* Effect.logWarning("an unreadable event notification was ignored")
        const event = "event" in notification ? notification : yield* outbox.find(notification.id)
        if (event !== undefined) yield* everywhere.publish(event)
      }).pipe(
        // The event is safe in the outbox (webhooks get it from there); only this runner's live
        // subscribers miss it.
        Effect.catchTag("StoreUnavailable", (outage) => Effect.logWarning("an event notification could not be read from the outbox", outage.message))
      )

    yield* listenScoped(pg, CHANNEL, received)

    // The notification goes out with the commit (Postgres holds it until then), and so does this runner's own copy.
    const publishAll = Effect.fn("Events.publishAll")((events: ReadonlyArray<DomainEvent>) =>
      Effect.all([
        outbox.appendAll(events),
        Effect.forEach(events, announce, { discard: true }),
        store.afterCommit(Effect.forEach(events, here.publish, { discard: true }))
      ], { discard: true }))
    return Events.of({
      publish: (event: DomainEvent) => publishAll([event]),
      publishAll,
      subscribe: everywhere.subscribe,
      observe: everywhere.observe,
      observeLocal: here.observe
    })
  })
)
