import type { StoreUnavailable } from "../../domain/Errors.js"
import { Clock, Duration, Effect, Either, Option, Random } from "effect"
import { DeliveryRepo, type DueDelivery } from "../ports/store/DeliveryRepo.js"
import { WebhookRepo, type WebhookRow } from "../ports/store/WebhookRepo.js"
import { Metrics, type MetricsService, type WebhookFailureReason } from "../Metrics.js"
import type { DeliveryStatus } from "../../domain/Webhook.js"
import { type AttemptResult, type AttemptSettings, deliverOnce } from "./deliver.js"
import { makeOutcomeRecorder, type PendingOutcome } from "./outcomes.js"
import { type RetrySchedule, retryDelay } from "./retrySchedule.js"

/** A delivery as the dispatcher holds it: enough to attempt it, its event included (`undefined`: no longer kept). */
export type DeliveryRef = DueDelivery

/** Why a webhook was turned off by the gateway itself. */
export const GONE_REASON = "410 Gone from the receiver"

export interface AttemptMode {
  /**
   * A scheduled delivery is retried on failure, and given up without an attempt when its
   * webhook is off. A test (false) goes out whatever the webhook's state, once.
   */
  readonly scheduled: boolean
  /**
   * Runs the request itself: the worker's concurrency slots are held for it alone, not while
   * the outcome waits for its batch to be written (the delivery stays the worker's until then).
   */
  readonly inSlot?: <A, E>(request: Effect.Effect<A, E>) => Effect.Effect<A, E>
}

/**
 * Attempts a stored delivery once and records how it went, in one transaction with what it
 * implies: the next attempt's time, or the end of the delivery, and on `410 Gone` the webhook
 * turned off (outcomes are written in batches: see `makeOutcomeRecorder`). A scheduled
 * delivery's webhook is looked up in the kept copy of the webhooks, a test's in the Store.
 * Left: why the delivery was given up without an attempt.
 */
export const makeAttemptDelivery = (settings: AttemptSettings, schedule: RetrySchedule) =>
  Effect.gen(function*() {
    const webhooks = yield* WebhookRepo
    const deliveries = yield* DeliveryRepo
    const record = yield* makeOutcomeRecorder
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

    /** A test reads its webhook afresh; a scheduled delivery from the kept copy, or afresh when the copy has not heard of it yet. */
    const webhookOf = (id: string, mode: AttemptMode): Effect.Effect<Option.Option<WebhookRow>, StoreUnavailable> =>
      mode.scheduled
        ? Effect.flatMap(webhooks.cached(), (rows) => {
          const kept = rows.find((row) => row.id === id)
          return kept === undefined ? webhooks.find(id) : Effect.succeedSome(kept)
        })
        : webhooks.find(id)

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

    /**
     * In the slot: the webhook's state is checked right before the request (a delivery that
     * waited for the slot sees what the one before it did to the webhook), and a `410 Gone`
     * is written before the slot is given up, so the next one finds the webhook off.
     * Left: why it is given up without an attempt.
     */
    const send = (delivery: DeliveryRef, mode: AttemptMode) =>
      Effect.gen(function*() {
        const found = yield* webhookOf(delivery.webhookId, mode)
        if (Option.isNone(found)) return Either.left("the webhook was removed")
        const webhook = found.value
        if (mode.scheduled && !webhook.enabled) {
          return Either.left(`the webhook is disabled${webhook.disabledReason === null ? "" : ` (${webhook.disabledReason})`}`)
        }
        const event = delivery.event
        if (event === undefined) return Either.left("the event is no longer kept (older than EVENT_RETENTION_HOURS)")

        const attempt = delivery.attempts + 1
        const result = yield* deliverOnce(webhook, event, attempt, settings)
        const next = yield* nextOf(result, attempt, webhook.maxAttempts, mode)
        const gone = result.statusCode === 410
        const outcome: PendingOutcome = {
          deliveryId: delivery.id,
          outcome: {
            attempt: { attempt, at: result.at, statusCode: result.statusCode, error: result.error, durationMs: result.durationMs },
            ...next
          },
          disable: gone ? { webhookId: webhook.id, reason: GONE_REASON } : undefined
        }
        if (gone) yield* record(outcome)
        return Either.right({ result, outcome, failed: next.status === "failed" })
      })

    return (delivery: DeliveryRef, mode: AttemptMode): Effect.Effect<Either.Either<AttemptResult, string>, StoreUnavailable> =>
      Effect.gen(function*() {
        const sent = yield* (mode.inSlot === undefined ? send(delivery, mode) : mode.inSlot(send(delivery, mode)))
        if (Either.isLeft(sent)) return yield* abandon(delivery, sent.left)
        const { failed, outcome, result } = sent.right
        yield* measure((metrics) => metrics.recordWebhookAttempt(result))
        if (failed) yield* measure((metrics) => metrics.recordWebhookFailure(failureReason(result, mode)))
        if (outcome.disable === undefined) yield* record(outcome)
        else yield* Effect.logWarning("webhook disabled: the receiver answered 410 Gone")
        return Either.right(result)
      }).pipe(Effect.annotateLogs({ deliveryId: delivery.id, webhookId: delivery.webhookId }))
  })
