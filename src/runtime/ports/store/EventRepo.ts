import { Context, type Effect } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { DomainEvent, EventKind } from "../../../domain/Events.js"

/** Which events a reader wants: of some sessions and kinds, after an event it already has. */
export interface EventFilter {
  readonly sessionId?: string | undefined
  readonly kinds?: ReadonlyArray<EventKind> | undefined
}

/**
 * The outbox: every domain event, in id order (UUID v7: time, then creation order). Appending
 * joins the caller's transaction, so an event exists exactly when the change it announces does.
 */
export class EventRepo extends Context.Tag("switchboard/EventRepo")<EventRepo, {
  /** Appends the events (one or several) with one statement. */
  readonly appendAll: (events: ReadonlyArray<DomainEvent>) => Effect.Effect<void, StoreUnavailable>
  readonly appendDispatched: (event: DomainEvent) => Effect.Effect<void, StoreUnavailable>
  readonly undispatched: (limit: number) => Effect.Effect<DomainEvent[], StoreUnavailable>
  readonly markDispatched: (ids: readonly string[]) => Effect.Effect<void, StoreUnavailable>
  /** Marks the oldest undispatched events (at most `limit`) dispatched without reading them; how many it marked. */
  readonly markOldestDispatched: (limit: number) => Effect.Effect<number, StoreUnavailable>
  readonly after: (afterId: string, filter: EventFilter, limit: number) => Effect.Effect<DomainEvent[], StoreUnavailable>
  readonly find: (id: string) => Effect.Effect<DomainEvent, StoreUnavailable>
  readonly prune: (before: string) => Effect.Effect<number, StoreUnavailable>
  readonly pruneSettled: (before: string) => Effect.Effect<number, StoreUnavailable>
}>() {}
