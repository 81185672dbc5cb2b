import type { StoreUnavailable } from "../../domain/Errors.js"
import { Clock, Effect } from "effect"
import { DeliveryRepo, type NewDeliveries } from "../ports/store/DeliveryRepo.js"
import { EventRepo } from "../ports/store/EventRepo.js"
import { Store } from "../ports/store/Store.js"
import { WebhookRepo } from "../ports/store/WebhookRepo.js"

/** What one fan-out pass did. */
export interface FanOutResult {
  /** Events taken from the outbox (a full batch means more may be waiting). */
  readonly events: number
  readonly deliveries: number
  /** The webhooks that got deliveries (a cluster wakes the dispatchers of their shares). */
  readonly webhookIds: ReadonlySet<string>
}

/**
 * The fan-out: takes the oldest undispatched events and, in one transaction, makes a pending
 * delivery (due now) for every enabled webhook that wants each one and marks them dispatched:
 * three statements a batch (the webhooks are matched against the repository's kept copy).
 * A crash between the two cannot happen, so every event gets its deliveries exactly once.
 * `webhook.test` events are marked and never fanned out: a test goes to its own webhook only.
 */
export const makeFanOut = Effect.gen(function*() {
  const events = yield* EventRepo
  const webhooks = yield* WebhookRepo
  const deliveries = yield* DeliveryRepo
  const transactionally = (yield* Store).transactionally

  return (batchSize: number): Effect.Effect<FanOutResult, StoreUnavailable> =>
    transactionally(Effect.gen(function*() {
      const batch = yield* events.undispatched(batchSize)
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const made: Array<NewDeliveries> = []
      for (const event of batch) {
        if (event.event === "webhook.test") continue
        const targets = yield* webhooks.matching(event)
        if (targets.length > 0) made.push({ event, webhookIds: targets.map((webhook) => webhook.id) })
      }
      const ids = yield* deliveries.createMany(made, at)
      yield* events.markDispatched(batch.map((event) => event.id))
      return { events: batch.length, deliveries: ids.length, webhookIds: new Set(made.flatMap((each) => each.webhookIds)) }
    }))
})
