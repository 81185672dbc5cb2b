import { Store } from "./ports/store/Store.js"
import { Context, Effect, Layer, PubSub, type Scope, Stream } from "effect"
import type { StoreUnavailable } from "../domain/Errors.js"
import { EventRepo } from "./ports/store/EventRepo.js"
import { type DomainEvent, type DomainEventOf, type EventKind, isEventOf } from "../domain/Events.js"

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
  /**
   * Calls `observer` with every event of the gateway (in a cluster, of every runner) as it is
   * put on the bus, for as long as the scope lasts: for wake-ups and counters, which a Stream
   * subscriber would make cost ~25 Effect operations per event. It runs in the publisher's
   * fiber, so it must be quick and must not throw.
   */
  readonly observe: (observer: EventObserver) => Effect.Effect<void, never, Scope.Scope>
  /** `observe`, for only the events this process published (what its own metrics count). */
  readonly observeLocal: (observer: EventObserver) => Effect.Effect<void, never, Scope.Scope>
}

export type EventObserver = (event: DomainEvent) => void

/**
 * The in-process bus; a slow subscriber loses the oldest events rather than holding memory
 * without bound. Observers are called as each event is published.
 */
export const makeEventBus = Effect.map(
  Effect.acquireRelease(PubSub.sliding<DomainEvent>(16_384), PubSub.shutdown),
  (pubsub) => {
    const observers = new Set<EventObserver>()
    return {
      publish: (event: DomainEvent) =>
        Effect.suspend(() => {
          // One observer that throws keeps neither the others nor the subscribers from the event.
          const failures: Array<unknown> = []
          for (const observer of observers) {
            try {
              observer(event)
            } catch (failure) {
              failures.push(failure)
            }
          }
          const published = PubSub.publish(pubsub, event)
          return failures.length === 0 ? published : Effect.zipLeft(published, Effect.logError("an event observer failed", ...failures))
        }),
      subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromQueue),
      observe: (observer: EventObserver) =>
        Effect.acquireRelease(Effect.sync(() => void observers.add(observer)), () => Effect.sync(() => void observers.delete(observer)))
    }
  }
)

export class Events extends Context.Tag("switchboard/Events")<Events, EventsService>() {
  /**
   * `subscribe`, for the events of the kinds named, typed as such: a live feed from the moment
   * this runs (inside a scope), e.g. `yield* Events.ofKind("message.received")`.
   */
  static readonly ofKind = <const K extends EventKind>(...kinds: ReadonlyArray<K>): Effect.Effect<Stream.Stream<DomainEventOf<K>>, never, Events | Scope.Scope> =>
    Effect.flatMap(Events, (events) => Effect.map(events.subscribe, Stream.filter(isEventOf(...kinds))))

  /** One process: the outbox keeps every event, the bus carries them to live subscribers. */
  static readonly layer = Layer.scoped(
    Events,
    Effect.gen(function*() {
      const outbox = yield* EventRepo
      const store = yield* Store
      const bus = yield* makeEventBus
      // Untraced: on every status change of every message (a span is ~30 Effect operations).
      const publishAll = (events: ReadonlyArray<DomainEvent>) =>
        Effect.zipRight(outbox.appendAll(events), store.afterCommit(Effect.forEach(events, bus.publish, { discard: true })))
      return Events.of({
        publish: (event: DomainEvent) => publishAll([event]),
        publishAll,
        subscribe: bus.subscribe,
        observe: bus.observe,
        observeLocal: bus.observe
      })
    })
  )
}
