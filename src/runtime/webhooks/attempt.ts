import type { StoreUnavailable } from "../../domain/Errors.js"
import { Cause, Duration, Effect, Either, Exit, Option, Runtime } from "effect"
import type { DueDelivery } from "../ports/store/DeliveryRepo.js"
import type { WebhookRow } from "../ports/store/WebhookRepo.js"
import { Metrics, type WebhookFailureReason } from "../Metrics.js"
import type { DeliveryStatus } from "../../domain/Webhook.js"
import { type AttemptResult, type AttemptSettings, deliverOnce } from "./deliver.js"
import type { OnWritten, OutcomeRecorder, PendingOutcome } from "./outcomes.js"
import { type RetrySchedule, retryDelay } from "./retrySchedule.js"

/** A delivery as the dispatcher holds it: enough to attempt it, its event included (`undefined`: no longer kept). */
export type DeliveryRef = DueDelivery

/** Why a webhook was turned off by the gateway itself. */
export const GONE_REASON = "410 Gone from the receiver"

/** What the worker hears of a scheduled attempt. */
export interface AttemptCallbacks {
  /**
   * The request is done (`answer`: what came of it; none when no request was made): its
   * concurrency slot is free. After a `410 Gone`, only once the webhook is written off, so that
   * the next delivery in that slot finds it off.
   */
  readonly requestDone: (answer?: AttemptResult) => void
  /** The outcome is written (or could not be): the delivery leaves the worker's hands. */
  readonly written: OnWritten
}

export interface Attempts {
  /**
   * Starts a scheduled attempt (`webhook`: the kept row; `undefined`, removed) and returns at
   * once. A delivery whose webhook is gone or off, or whose event is no longer kept, is given
   * up without a request; a failed attempt is scheduled again per the retry schedule.
   */
  readonly start: (delivery: DeliveryRef, webhook: WebhookRow | undefined, callbacks: AttemptCallbacks) => void
  /**
   * A test's one attempt, whatever the webhook's state, never retried; returns once its outcome
   * is written. Left: why it was given up without an attempt.
   */
  readonly test: (delivery: DeliveryRef, webhook: Option.Option<WebhookRow>) => Effect.Effect<Either.Either<AttemptResult, string>, StoreUnavailable>
}

/**
 * Attempts stored deliveries and hands what became of them to the outcome recorder, which
 * writes them in batches, with what they imply: the next attempt's time or the end of the
 * delivery, and on `410 Gone` the webhook turned off.
 *
 * A scheduled attempt is plain callbacks from start to end (the worker starts thousands a
 * second).
 */
export const makeAttempts = (settings: AttemptSettings, schedule: RetrySchedule, recorder: OutcomeRecorder) =>
  Effect.gen(function*() {
    // Logs, rare here, go through the runtime synchronously.
    const runNow = Runtime.runSync(yield* Effect.runtime<never>())
    // The gateway's metrics; the dispatcher also runs without them (its own tests, benches).
    const metrics = yield* Effect.serviceOption(Metrics)
    const measure = (result: AttemptResult, failure: WebhookFailureReason | undefined) => {
      if (Option.isNone(metrics)) return
      metrics.value.recordWebhookAttempt(result)
      if (failure !== undefined) metrics.value.recordWebhookFailure(failure)
    }
    const noteAbandoned = (delivery: DeliveryRef, reason: string) => (exit: Exit.Exit<void, StoreUnavailable>) => {
      if (Exit.isFailure(exit)) return
      if (Option.isSome(metrics)) metrics.value.recordWebhookFailure("abandoned")
      runNow(Effect.logInfo("webhook delivery given up without an attempt").pipe(
        Effect.annotateLogs({ reason, deliveryId: delivery.id, webhookId: delivery.webhookId })
      ))
    }

    /** Why a delivery cannot be attempted now, if it cannot. A test goes out whatever its webhook's state. */
    const refusal = (delivery: DeliveryRef, webhook: WebhookRow | undefined, scheduled: boolean): string | undefined => {
      if (webhook === undefined) return "the webhook was removed"
      if (scheduled && !webhook.enabled) {
        return `the webhook is disabled${webhook.disabledReason === null ? "" : ` (${webhook.disabledReason})`}`
      }
      if (delivery.event === undefined) return "the event is no longer kept (older than EVENT_RETENTION_HOURS)"
      return undefined
    }
    const abandonment = (delivery: DeliveryRef, reason: string): PendingOutcome => ({
      deliveryId: delivery.id,
      abandoned: { reason, at: new Date().toISOString() }
    })

    /** What the attempt comes to: the outcome to write, and whether it ends the delivery as failed. */
    const outcomeOf = (delivery: DeliveryRef, webhook: WebhookRow, attempt: number, result: AttemptResult, scheduled: boolean) => {
      const gone = result.statusCode === 410
      let status: DeliveryStatus = "delivered"
      let nextAttemptAt: string | null = null
      if (!result.delivered) {
        if (gone || !scheduled || attempt >= webhook.maxAttempts) status = "failed"
        else {
          status = "pending"
          nextAttemptAt = new Date(Date.now() + Duration.toMillis(retryDelay(schedule, attempt, Math.random()))).toISOString()
        }
      }
      const pending: PendingOutcome = {
        deliveryId: delivery.id,
        outcome: {
          attempt: { attempt, at: result.at, statusCode: result.statusCode, error: result.error, durationMs: result.durationMs },
          status,
          nextAttemptAt
        },
        disable: gone ? { webhookId: webhook.id, reason: GONE_REASON } : undefined
      }
      const failure: WebhookFailureReason | undefined = status !== "failed" ? undefined : gone ? "gone" : scheduled ? "attempts_exhausted" : "test"
      return { pending, failure, gone }
    }

    const start = (delivery: DeliveryRef, webhook: WebhookRow | undefined, { requestDone, written }: AttemptCallbacks) => {
      const refused = refusal(delivery, webhook, true)
      if (refused !== undefined) {
        requestDone()
        const noted = noteAbandoned(delivery, refused)
        return recorder.submit(abandonment(delivery, refused), (exit) => {
          written(exit)
          noted(exit)
        })
      }
      const attempt = delivery.attempts + 1
      void deliverOnce(webhook!, delivery.event!, attempt, settings).then((result) => {
        const { failure, gone, pending } = outcomeOf(delivery, webhook!, attempt, result, true)
        measure(result, failure)
        if (!gone) {
          requestDone(result)
          return recorder.submit(pending, written)
        }
        runNow(Effect.logWarning("webhook disabled: the receiver answered 410 Gone").pipe(
          Effect.annotateLogs({ deliveryId: delivery.id, webhookId: delivery.webhookId })
        ))
        recorder.submit(pending, (exit) => {
          requestDone(result)
          written(exit)
        })
      }).catch((defect) => {
        // A bug of ours, not the receiver's: the delivery stays pending and is claimed again.
        runNow(Effect.logError("webhook delivery attempt failed", Cause.die(defect)))
        requestDone()
        written(Exit.void)
      })
    }

    const test: Attempts["test"] = (delivery, found) =>
      Effect.gen(function*() {
        const webhook = Option.getOrUndefined(found)
        const refused = refusal(delivery, webhook, false)
        if (refused !== undefined) {
          yield* recorder.record(abandonment(delivery, refused))
          noteAbandoned(delivery, refused)(Exit.void)
          return Either.left(refused)
        }
        const attempt = delivery.attempts + 1
        const result = yield* Effect.promise(() => deliverOnce(webhook!, delivery.event!, attempt, settings))
        const { failure, pending } = outcomeOf(delivery, webhook!, attempt, result, false)
        measure(result, failure)
        if (pending.disable !== undefined) yield* Effect.logWarning("webhook disabled: the receiver answered 410 Gone")
        yield* recorder.record(pending)
        return Either.right(result)
      }).pipe(Effect.annotateLogs({ deliveryId: delivery.id, webhookId: delivery.webhookId }))

    return { start, test } satisfies Attempts
  })
