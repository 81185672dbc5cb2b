import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"
import type { DomainEvent } from "../../../domain/Events.js"
import type { Delivery, DeliveryAttempt, DeliveryStatus } from "../../../domain/Webhook.js"

/** What `due` may take of one webhook's due deliveries: up to `room` of the oldest, leaving out `except` (held already). */
export interface DueRoom {
  readonly webhookId: string
  readonly room: number
  readonly except: ReadonlyArray<string>
}

/** A due delivery with what an attempt needs: its event, read in the same query (`undefined`: no longer kept). */
export interface DueDelivery {
  readonly id: string
  readonly webhookId: string
  readonly eventId: string
  readonly attempts: number
  readonly event: DomainEvent | undefined
}

/** The deliveries one fan-out makes: an event to its webhooks. */
export interface NewDeliveries {
  readonly event: { readonly id: string; readonly event: string }
  readonly webhookIds: ReadonlyArray<string>
}

/** What became of one attempt, and what the delivery does next. */
export interface AttemptOutcome {
  readonly attempt: DeliveryAttempt
  readonly status: DeliveryStatus
  /** When to try again (`pending`), else null. */
  readonly nextAttemptAt: string | null
}

/**
 * One delivery per (event, webhook), created when the event is dispatched; every attempt is
 * recorded with its status code, error and duration.
 */
export class DeliveryRepo extends Context.Tag("switchboard/DeliveryRepo")<DeliveryRepo, {
  readonly create: (event: { readonly id: string; readonly event: string; }, webhookIds: readonly string[], at: string) => Effect.Effect<readonly string[], StoreUnavailable>
  /** Pending deliveries of many events, due at `at`, in one statement; their ids. */
  readonly createMany: (batch: ReadonlyArray<NewDeliveries>, at: string) => Effect.Effect<readonly string[], StoreUnavailable>
  /** Pending deliveries due at `now`, oldest first, at most `limit`, and of each webhook at most what its room says. */
  readonly due: (now: string, limit: number, rooms: ReadonlyArray<DueRoom>) => Effect.Effect<DueDelivery[], StoreUnavailable>
  readonly nextDue: () => Effect.Effect<Option.Option<string>, StoreUnavailable>
  /** Many attempts' outcomes: one insert of their log rows, one update per distinct outcome (joins the caller's transaction). */
  readonly recordAttempts: (outcomes: ReadonlyArray<{ readonly deliveryId: string; readonly outcome: AttemptOutcome }>) => Effect.Effect<void, StoreUnavailable>
  readonly find: (id: string) => Effect.Effect<Option.Option<Delivery>, StoreUnavailable>
  readonly list: (webhookId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Delivery>, StoreUnavailable>
  readonly redeliver: (id: string, at: string) => Effect.Effect<void, StoreUnavailable>
  readonly abandon: (id: string, reason: string, at: string) => Effect.Effect<void, StoreUnavailable>
}>() {}
