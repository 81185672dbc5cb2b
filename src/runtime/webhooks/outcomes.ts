import type { StoreUnavailable } from "../../domain/Errors.js"
import { Deferred, Duration, Effect, Exit, Queue, type Scope } from "effect"
import { type AttemptOutcome, DeliveryRepo } from "../ports/store/DeliveryRepo.js"
import { Store } from "../ports/store/Store.js"
import { WebhookRepo } from "../ports/store/WebhookRepo.js"

/** One attempt's outcome, waiting to be written; `disable`: the webhook to turn off (410 Gone), with why. */
export interface PendingOutcome {
  readonly deliveryId: string
  readonly outcome: AttemptOutcome
  readonly disable?: { readonly webhookId: string; readonly reason: string } | undefined
}

/** The most outcomes written in one transaction. */
const MAX_BATCH = 1_000

/**
 * The outcomes of attempts, written together: whatever attempts finished while the previous
 * batch was being written go into the next, in one transaction (their attempt log rows in one
 * INSERT, one UPDATE per distinct outcome). `record` returns once its batch has committed, so
 * a delivery leaves the worker's hands only when the Store says what became of it: killed
 * before that, it is still pending and is attempted again (at least once).
 */
export const makeOutcomeRecorder: Effect.Effect<
  (pending: PendingOutcome) => Effect.Effect<void, StoreUnavailable>,
  never,
  DeliveryRepo | WebhookRepo | Store | Scope.Scope
> = Effect.gen(function*() {
  const deliveries = yield* DeliveryRepo
  const webhooks = yield* WebhookRepo
  const transactionally = (yield* Store).transactionally
  const queue = yield* Effect.acquireRelease(
    Queue.unbounded<readonly [PendingOutcome, Deferred.Deferred<void, StoreUnavailable>]>(),
    Queue.shutdown
  )

  const write = (batch: ReadonlyArray<PendingOutcome>) =>
    Effect.gen(function*() {
      const disabled = batch.flatMap((pending) => (pending.disable === undefined ? [] : [pending.disable]))
      yield* transactionally(Effect.gen(function*() {
        yield* deliveries.recordAttempts(batch)
        for (const { reason, webhookId } of disabled) yield* webhooks.update(webhookId, { enabled: false, disabledReason: reason })
      }))
      // Dropped again after the commit: a copy read while the transaction was open is stale.
      if (disabled.length > 0) yield* webhooks.forget
    })

  yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
    const first = yield* Queue.take(queue)
    // Let the attempts whose answers have just come in add theirs to this batch.
    yield* Effect.sleep(Duration.millis(1))
    const taken = [first, ...yield* Queue.takeUpTo(queue, MAX_BATCH - 1)]
    const exit = yield* Effect.exit(write(taken.map(([pending]) => pending)))
    yield* Effect.forEach(taken, ([, done]) => Deferred.done(done, Exit.asVoid(exit)), { discard: true })
  })))

  return (pending) =>
    Effect.flatMap(Deferred.make<void, StoreUnavailable>(), (done) =>
      Effect.zipRight(Queue.offer(queue, [pending, done]), Deferred.await(done)))
})
