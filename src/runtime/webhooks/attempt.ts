import type { StoreUnavailable } from "../../domain/Errors.js"
import { Clock, Duration, Effect, Either, Option, Random } from "effect"
import { DeliveryRepo } from "../ports/store/DeliveryRepo.js"
import { EventRepo } from "../ports/store/EventRepo.js"
import { Store } from "../ports/store/Store.js"
import { WebhookRepo } from "../ports/store/WebhookRepo.js"
import { Metrics, type MetricsService, type WebhookFailureReason } from "../Metrics.js"
import type { Delivery, DeliveryStatus } from "../../domain/Webhook.js"
import { type AttemptResult, type AttemptSettings, deliverOnce } from "./deliver.js"
import { type RetrySchedule, retryDelay } from "./retrySchedule.js"

/** A delivery as the dispatcher holds it: enough to attempt it. */
export type DeliveryRef = Pick<Delivery, "id" | "webhookId" | "eventId" | "attempts">

/** Why a webhook was turned off by the gateway itself. */
export const GONE_REASON = "410 Gone from the receiver"

export interface AttemptMode {
  /**
   * A scheduled delivery is retried on failure, and given up without an attempt when its
   * webhook is off. A test (false) goes out whatever the webhook's state, once.
   */
  readonly scheduled: boolean
}

/**
 * Attempts a stored delivery once and records how it went, in one transaction with what it
 * implies: the next attempt's time, or the end of the delivery, and on `410 Gone` the webhook
 * turned off. Left: why the delivery was given up without an attempt.
 */
export const makeAttemptDelivery = (settings: AttemptSettings, schedule: RetrySchedule) =>
  Effect.gen(function*() {
    const webhooks = yield* WebhookRepo
    const events = yield* EventRepo
    const deliveries = yield* DeliveryRepo
    const transactionally = (yield* Store).transactionally
    const isoNow = Effect.map(Clock.currentTimeMillis, (now) => new Date(now).toISOString())
    // The gateway's metrics; the dispatcher also runs without them (its own tests, benches).
    const metrics = yield* Effect.serviceOption(Metrics)
    const measure = (record: (metrics: MetricsService) => Effect.Effect<void>) =>
      Option.match(metrics, { onNone: () => Effect.void, onSome: record })
    const failureReason = (result: AttemptResult, mode: AttemptMode): WebhookFailureReason =>
      result.statusCode === 410 ? "gone" : mode.scheduled ? "attempts_exhausted" : "test"

    const abandon = (delivery: DeliveryRef, reason: string) =>
      Effect.flatMap(isoNow, (at) => deliveries.abandon(delivery.id, reason, at)).pipe(
        Effect.zipRight(measure((metrics) => metrics.recordWebhookFailure("abandoned"))),
        Effect.zipRight(Effect.logInfo("webhook delivery given up without an attempt").pipe(Effect.annotateLogs({ reason }))),
        Effect.as(Either.left(reason))
      )

    /** What the delivery does after this attempt. */
    const nextOf = (result: AttemptResult, attempt: number, maxAttempts: number, mode: AttemptMode) =>
      Effect.gen(function*() {
        if (result.delivered) return { status: "delivered" as DeliveryStatus, nextAttemptAt: null }
        if (result.statusCode === 410 || !mode.scheduled || attempt >= maxAttempts) {
          return { status: "failed" as DeliveryStatus, nextAttemptAt: null }
        }
        const wait = retryDelay(schedule, attempt, yield* Random.next)
        const at = (yield* Clock.currentTimeMillis) + Duration.toMillis(wait)
        return { status: "pending" as DeliveryStatus, nextAttemptAt: new Date(at).toISOString() }
      })

    return (delivery: DeliveryRef, mode: AttemptMode): Effect.Effect<Either.Either<AttemptResult, string>, StoreUnavailable> =>
      Effect.gen(function*() {
        const found = yield* webhooks.find(delivery.webhookId)
        if (Option.isNone(found)) return yield* abandon(delivery, "the webhook was removed")
        const webhook = found.value
        if (mode.scheduled && !webhook.enabled) {
          return yield* abandon(delivery, `the webhook is disabled${webhook.disabledReason === null ? "" : ` (${webhook.disabledReason})`}`)
        }
        const event = yield* events.find(delivery.eventId)
        if (event === undefined) return yield* abandon(delivery, "the event is no longer kept (older than EVENT_RETENTION_HOURS)")

        const attempt = delivery.attempts + 1
        const result = yield* deliverOnce(webhook, event, attempt, settings)
        const next = yield* nextOf(result, attempt, webhook.maxAttempts, mode)
        yield* measure((metrics) => metrics.recordWebhookAttempt(result))
        if (next.status === "failed") yield* measure((metrics) => metrics.recordWebhookFailure(failureReason(result, mode)))
        const gone = result.statusCode === 410
        yield* transactionally(Effect.zipRight(
          deliveries.recordAttempt(delivery.id, {
            attempt: { attempt, at: result.at, statusCode: result.statusCode, error: result.error, durationMs: result.durationMs },
            ...next
          }),
          gone ? webhooks.update(webhook.id, { enabled: false, disabledReason: GONE_REASON }) : Effect.void
        ))
        if (gone) yield* Effect.logWarning("webhook disabled: the receiver answered 410 Gone")
        return Either.right(result)
      }).pipe(Effect.annotateLogs({ deliveryId: delivery.id, webhookId: delivery.webhookId }))
  })
