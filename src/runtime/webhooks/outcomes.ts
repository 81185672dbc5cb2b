import type { StoreUnavailable } from "../../domain/Errors.js"
import { Duration, Effect, Exit, type Scope } from "effect"
import { type AttemptOutcome, DeliveryRepo } from "../ports/store/DeliveryRepo.js"
import { Store } from "../ports/store/Store.js"
import { WebhookRepo } from "../ports/store/WebhookRepo.js"
import { makeWakeSignal } from "./wakeSignal.js"

/**
 * What became of a delivery, waiting to be written: an attempt's outcome (with `disable`, the
 * webhook to turn off on 410 Gone, and why), or the delivery given up without an attempt.
 */
export type PendingOutcome =
  | {
    readonly deliveryId: string
    readonly outcome: AttemptOutcome
    readonly disable?: { readonly webhookId: string; readonly reason: string } | undefined
  }
  | { readonly deliveryId: string; readonly abandoned: { readonly reason: string; readonly at: string } }

/** Called once the outcome's batch is written (`Exit.void`), or could not be. */
export type OnWritten = (exit: Exit.Exit<void, StoreUnavailable>) => void

export interface OutcomeRecorder {
  /** Adds the outcome to the next batch; `written` is called, outside any fiber, when that batch is done. */
  readonly submit: (pending: PendingOutcome, written: OnWritten) => void
  /** `submit`, returning once the batch is written. */
  readonly record: (pending: PendingOutcome) => Effect.Effect<void, StoreUnavailable>
}

/** The most outcomes written in one transaction. */
const MAX_BATCH = 1_000

/**
 * How long the first outcome of a batch waits for others to join it, unless someone awaits it
 * (`record`). At 200 attempts a second that is four outcomes a transaction rather than one.
 */
const GATHER_WINDOW = Duration.millis(20)

/**
 * The outcomes of attempts, written together: whatever attempts finished while the previous
 * batch was being written go into the next, in one transaction (their attempt log rows in one
 * INSERT, one UPDATE per distinct outcome). A delivery leaves the worker's hands only when its
 * `written` callback says what the Store made of it: killed before that, it is still pending
 * and is attempted again (at least once). Submitting is a plain call (an array push and a
 * wake-up), since every attempt does it.
 */
export const makeOutcomeRecorder: Effect.Effect<OutcomeRecorder, never, DeliveryRepo | WebhookRepo | Store | Scope.Scope> = Effect.gen(
  function*() {
    const deliveries = yield* DeliveryRepo
    const webhooks = yield* WebhookRepo
    const transactionally = (yield* Store).transactionally
    const submitted = yield* makeWakeSignal
    const awaited = yield* makeWakeSignal
    let waiting: Array<readonly [PendingOutcome, OnWritten]> = []

    const write = (batch: ReadonlyArray<PendingOutcome>) =>
      Effect.gen(function*() {
        const attempted = batch.flatMap((pending) => ("outcome" in pending ? [pending] : []))
        const disabled = attempted.flatMap((pending) => (pending.disable === undefined ? [] : [pending.disable]))
        yield* transactionally(Effect.gen(function*() {
          if (attempted.length > 0) yield* deliveries.recordAttempts(attempted)
          for (const pending of batch) if ("abandoned" in pending) yield* deliveries.abandon(pending.deliveryId, pending.abandoned.reason, pending.abandoned.at)
          for (const { reason, webhookId } of disabled) yield* webhooks.update(webhookId, { enabled: false, disabledReason: reason })
        }))
        // Dropped again after the commit: a copy read while the transaction was open is stale.
        if (disabled.length > 0) yield* webhooks.forget
      })

    const writeWaiting = Effect.suspend(() => {
      // A wake-up left over from the last busy spell: nothing to write, no empty transaction.
      if (waiting.length === 0) return Effect.void
      const taken = waiting.length <= MAX_BATCH ? waiting : waiting.slice(0, MAX_BATCH)
      waiting = waiting.length <= MAX_BATCH ? [] : waiting.slice(MAX_BATCH)
      return Effect.flatMap(Effect.exit(write(taken.map(([pending]) => pending))), (exit) => {
        const done = Exit.asVoid(exit)
        const thrown: Array<unknown> = []
        for (const [, written] of taken) {
          try {
            written(done)
          } catch (error) {
            thrown.push(error)
          }
        }
        const failed = Exit.isFailure(exit)
          ? Effect.logError("webhook outcomes not written: the deliveries stay pending and are attempted again", exit.cause)
          : Effect.void
        return thrown.length === 0 ? failed : Effect.zipRight(failed, Effect.logError("a webhook outcome's callback failed", ...thrown))
      })
    })

    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      if (waiting.length === 0) yield* submitted.wait()
      // Let the attempts whose answers come in meanwhile add theirs to this batch: a transaction
      // is the costliest step of an outcome, and the delivery was received already.
      yield* awaited.wait(GATHER_WINDOW)
      yield* writeWaiting
    })))

    const submit = (pending: PendingOutcome, written: OnWritten) => {
      waiting.push([pending, written])
      if (waiting.length === 1) submitted.raiseNow()
    }
    return {
      submit,
      record: (pending) =>
        Effect.async<void, StoreUnavailable>((resume) => {
          submit(pending, (exit) => resume(exit))
          awaited.raiseNow()
        })
    }
  }
)
