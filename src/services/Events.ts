import { Context, Effect, Layer, PubSub, Schema, Stream } from "effect"
import { EventRepo } from "../layers/store/EventRepo.js"
import { uuidv7 } from "./Ids.js"

/** The event kinds of API.md's catalog. */
export const EventKind = Schema.Literal(
  "session.status",
  "session.qr",
  "message.received",
  "message.sent",
  "message.ack",
  "message.failed",
  "message.reaction",
  "message.revoked",
  "group.join",
  "group.leave",
  "group.update",
  "group.participants",
  "label.update",
  /** Sent by `POST /api/webhooks/{id}/test` to that webhook only. */
  "webhook.test"
)
export type EventKind = typeof EventKind.Type

/** The envelope every consumer sees (webhook body, SSE data, library stream). */
export const DomainEvent = Schema.Struct({
  id: Schema.String,
  event: EventKind,
  sessionId: Schema.String,
  timestamp: Schema.String,
  data: Schema.Unknown
})
export type DomainEvent = typeof DomainEvent.Type

export const makeEvent = (event: EventKind, sessionId: string, data: unknown, at = new Date()): DomainEvent => ({
  id: uuidv7(at.getTime()),
  event,
  sessionId,
  timestamp: at.toISOString(),
  data
})

/**
 * Domain events. Publishing writes the event to the outbox (the Store's `events` table), in
 * the caller's transaction when there is one, so an event exists exactly when the change it
 * announces does; webhooks are delivered from there. It is also put on an in-process bus for
 * live subscribers (the SSE stream, library users).
 */
export class Events extends Context.Tag("switchboard/Events")<Events, {
  readonly publish: (event: DomainEvent) => Effect.Effect<void>
  /** A live feed from the moment of subscription. Subscribe inside a scope to not miss events. */
  readonly subscribe: Effect.Effect<Stream.Stream<DomainEvent>, never, import("effect").Scope.Scope>
}>() {
  /** A slow subscriber loses the oldest events rather than holding memory without bound; the outbox keeps them all. */
  static readonly layer = Layer.scoped(
    Events,
    Effect.gen(function*() {
      const outbox = yield* EventRepo
      const pubsub = yield* Effect.acquireRelease(PubSub.sliding<DomainEvent>(16_384), PubSub.shutdown)
      return Events.of({
        publish: (event) => Effect.zipRight(outbox.append(event), PubSub.publish(pubsub, event)).pipe(Effect.asVoid),
        subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromQueue)
      })
    })
  )
}
