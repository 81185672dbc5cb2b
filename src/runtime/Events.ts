import { Store } from "./ports/store/Store.js"
import { Context, Effect, Layer, PubSub, type Scope, Stream } from "effect"
import type { StoreUnavailable } from "../domain/Errors.js"
import { EventRepo } from "./ports/store/EventRepo.js"
import type { DomainEvent } from "../domain/Events.js"

/**
 * Domain events. Publishing writes the event to the outbox (the Store's `events` table), in
 * the caller's transaction when there is one, so an event exists exactly when the change it
 * announces does; webhooks are delivered from there. Once that transaction has committed (at
 * once outside one) it is also put on an in-process bus for live subscribers (the SSE stream,
 * library users), who so never see an event whose change was rolled back; in a cluster, every
 * runner's bus carries every runner's events (see `ClusterEventsLive`).
 */
export interface EventsService {
  readonly publish: (event: DomainEvent) => Effect.Effect<void, StoreUnavailable>
  /** Several events of one change, in this order: one outbox write for all of them. */
  readonly publishAll: (events: ReadonlyArray<DomainEvent>) => Effect.Effect<void, StoreUnavailable>
  /**
   * A live feed from the moment of subscription: every event of the gateway (in a cluster,
   * of every runner). Subscribe inside a scope to not miss events.
   */
  readonly subscribe: Effect.Effect<Stream.Stream<DomainEvent>, never, Scope.Scope>
  /** Only the events this process published (what its own metrics count). */
  readonly subscribeLocal: Effect.Effect<Stream.Stream<DomainEvent>, never, Scope.Scope>
}

/** The in-process bus; a slow subscriber loses the oldest events rather than holding memory without bound. */
export const makeEventBus = Effect.map(
  Effect.acquireRelease(PubSub.sliding<DomainEvent>(16_384), PubSub.shutdown),
  (pubsub) => ({
    publish: (event: DomainEvent) => PubSub.publish(pubsub, event),
    subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromQueue)
  })
)

export class Events extends Context.Tag("switchboard/Events")<Events, EventsService>() {
  /** One process: the outbox keeps every event, the bus carries them to live subscribers. */
  static readonly layer = Layer.scoped(
    Events,
    Effect.gen(function*() {
      const outbox = yield* EventRepo
      const store = yield* Store
      const bus = yield* makeEventBus
      const publishAll = Effect.fn("Events.publishAll")((events: ReadonlyArray<DomainEvent>) =>
        Effect.zipRight(outbox.appendAll(events), store.afterCommit(Effect.forEach(events, bus.publish, { discard: true }))))
      return Events.of({
        publish: (event: DomainEvent) => publishAll([event]),
        publishAll,
        subscribe: bus.subscribe,
        subscribeLocal: bus.subscribe
      })
    })
  )
}
