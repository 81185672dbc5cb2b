import type { StoreUnavailable } from "../../domain/Errors.js"
import { Clock, Effect } from "effect"
import type { DomainEvent } from "../../domain/Events.js"
import { DeliveryRepo, type DueDelivery, type NewDeliveries } from "../ports/store/DeliveryRepo.js"
import { EventRepo } from "../ports/store/EventRepo.js"
import { Store } from "../ports/store/Store.js"
import { WebhookRepo, webhookWants } from "../ports/store/WebhookRepo.js"

/** What one fan-out pass did. */
export interface FanOutResult {
  /** Events taken from the outbox. */
  readonly events: number
  /** The pass took as many as it could: more may be waiting. */
  readonly more: boolean
  /** The deliveries made, due now, each with its event: what a worker can take without a claim. */
  readonly deliveries: ReadonlyArray<DueDelivery>
}

/** With no webhook, a pass marks up to this many batches' worth of events at once. */
const UNREAD_BATCHES = 10

/**
 * The fan-out: takes the oldest undispatched events and, in one transaction, makes a pending
 * delivery (due now) for every enabled webhook that wants each one and marks them dispatched:
 * three statements a batch (the webhooks are matched against the repository's kept copy).
 * A crash between the two cannot happen, so every event gets its deliveries exactly once.
 * `webhook.test` events are marked and never fanned out: a test goes to its own webhook only.
 * While the kept copy says there is no webhook at all, the waiting events are marked as they
 * stand, more of them a pass (nothing is read, parsed or matched): one UPDATE a pass.
 */
export const makeFanOut = Effect.gen(function*() {
  const events = yield* EventRepo
  const webhooks = yield* WebhookRepo
  const deliveries = yield* DeliveryRepo
  const transactionally = (yield* Store).transactionally

  return (batchSize: number): Effect.Effect<FanOutResult, StoreUnavailable> =>
    transactionally(Effect.gen(function*() {
      // Looked at inside the transaction, like the copy read below: on SQLite a webhook created
      // while the pass runs commits after it (one connection), and the next pass sees it.
      if (webhooks.kept()?.length === 0) {
        const limit = batchSize * UNREAD_BATCHES
        const marked = yield* events.markOldestDispatched(limit)
        return { events: marked, more: marked === limit, deliveries: [] }
      }
      const batch = yield* events.undispatched(batchSize)
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      // The kept copy once for the batch, matched in memory: no Effect per event (issue 19).
      const everyWebhook = batch.length === 0 ? [] : yield* webhooks.cached()
      const made: Array<NewDeliveries & { readonly event: DomainEvent }> = []
      for (const event of batch) {
        if (event.event === "webhook.test") continue
        const targets = everyWebhook.filter((webhook) => webhookWants(webhook, event))
        if (targets.length > 0) made.push({ event, webhookIds: targets.map((webhook) => webhook.id) })
      }
      // `createMany` gives the ids in the order of its rows: each event's webhooks in turn.
      const ids = yield* deliveries.createMany(made, at)
      yield* events.markDispatched(batch.map((event) => event.id))
      let next = 0
      const due = made.flatMap(({ event, webhookIds }) =>
        webhookIds.map((webhookId): DueDelivery => ({ id: ids[next++]!, webhookId, eventId: event.id, attempts: 0, event })))
      return { events: batch.length, more: batch.length === batchSize, deliveries: due }
    }))
})
