import { Clock, Duration, Effect, FiberSet, Option, type Scope } from "effect"
import { DeliveryRepo } from "../ports/store/DeliveryRepo.js"
import type { DeliveryRef } from "./attempt.js"
import { surviving } from "./surviving.js"
import { makeWakeSignal } from "./wakeSignal.js"

export interface WorkerLimits {
  /** Attempts in flight at once, over all webhooks. */
  readonly concurrency: number
  /** Attempts in flight at once to one webhook: a slow receiver holds only its own. */
  readonly perWebhookConcurrency: number
  /** The longest the worker sleeps between looks at the Store when nothing wakes it. */
  readonly idlePoll: Duration.Duration
  /** How long closing the worker waits for the attempts in flight (one attempt's timeout). */
  readonly finishWithin: Duration.Duration
}

/**
 * The deliveries in flight, by webhook: what the limits are checked against, and what keeps a
 * delivery from being attempted twice at once. Changed only synchronously.
 */
class InFlight {
  private readonly webhookOf = new Map<string, string>()
  private readonly countOf = new Map<string, number>()

  get size() {
    return this.webhookOf.size
  }
  deliveryIds() {
    return [...this.webhookOf.keys()]
  }
  webhooksAtLimit(limit: number) {
    return [...this.countOf].filter(([, count]) => count >= limit).map(([webhookId]) => webhookId)
  }
  /** Takes the delivery unless it is in flight already or its webhook is at `limit`. */
  tryAdd(delivery: DeliveryRef, limit: number) {
    const count = this.countOf.get(delivery.webhookId) ?? 0
    if (this.webhookOf.has(delivery.id) || count >= limit) return false
    this.webhookOf.set(delivery.id, delivery.webhookId)
    this.countOf.set(delivery.webhookId, count + 1)
    return true
  }
  add(delivery: DeliveryRef) {
    this.webhookOf.set(delivery.id, delivery.webhookId)
    this.countOf.set(delivery.webhookId, (this.countOf.get(delivery.webhookId) ?? 0) + 1)
  }
  remove(delivery: DeliveryRef) {
    if (!this.webhookOf.delete(delivery.id)) return
    const count = (this.countOf.get(delivery.webhookId) ?? 1) - 1
    if (count > 0) this.countOf.set(delivery.webhookId, count)
    else this.countOf.delete(delivery.webhookId)
  }
}

export interface DeliveryWorker {
  /** Runs until interrupted: takes due deliveries and attempts them, each in its own fiber. */
  readonly run: Effect.Effect<never>
  /** Ends the worker's sleep: a delivery was made or became due. */
  readonly wake: Effect.Effect<void>
  /**
   * Makes a delivery and claims it in the same step, so that no pass of the worker takes it;
   * then `use`s it (an immediate attempt) and releases it.
   */
  readonly withNewDelivery: <A, E>(
    create: Effect.Effect<DeliveryRef, E>,
    use: (delivery: DeliveryRef) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
}

/**
 * The delivery worker. A pass claims, under a lock, the due deliveries that fit the limits
 * (asking the Store for due deliveries other than those in flight and those of webhooks at
 * their limit, so a dead receiver's backlog never hides another's), and forks one fiber per
 * attempt. With nothing to claim it sleeps until the next delivery is due, a finished attempt
 * frees a slot, or it is woken. Attempt fibers belong to the worker's scope: closing it lets
 * the attempts in flight finish and record their outcome (within `finishWithin`), so a
 * dispatcher handed to another runner does not send them again; an attempt cut off anyway
 * stays pending and is made again after the restart.
 */
export const makeDeliveryWorker = (
  limits: WorkerLimits,
  attempt: (delivery: DeliveryRef) => Effect.Effect<unknown, unknown>
): Effect.Effect<DeliveryWorker, never, DeliveryRepo | Scope.Scope> =>
  Effect.gen(function*() {
    const deliveries = yield* DeliveryRepo
    const signal = yield* makeWakeSignal
    const claiming = yield* Effect.makeSemaphore(1)
    const inFlight = new InFlight()
    const fibers = yield* FiberSet.make<unknown>()
    // Runs before the set interrupts what is left (finalizers run last-added first), and after
    // the loop that claims deliveries has stopped (it is forked later in the same scope).
    yield* Effect.addFinalizer(() => Effect.timeoutOption(FiberSet.awaitEmpty(fibers), limits.finishWithin))

    const release = (delivery: DeliveryRef) => Effect.zipRight(Effect.sync(() => inFlight.remove(delivery)), signal.raise)

    const claimDue = claiming.withPermits(1)(
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const free = limits.concurrency - inFlight.size
        if (free <= 0) return { claimed: [], at }
        const due = yield* deliveries.due(new Date(at).toISOString(), free, {
          webhookIds: inFlight.webhooksAtLimit(limits.perWebhookConcurrency),
          deliveryIds: inFlight.deliveryIds()
        })
        const claimed: Array<DeliveryRef> = []
        for (const delivery of due) {
          if (claimed.length < free && inFlight.tryAdd(delivery, limits.perWebhookConcurrency)) claimed.push(delivery)
        }
        return { claimed, at }
      })
    )

    const attemptInFlight = (delivery: DeliveryRef) =>
      attempt(delivery).pipe(surviving("webhook delivery attempt"), Effect.ensuring(release(delivery)))

    /**
     * Sleeps until the next delivery is due. One that was due when the pass looked, yet not
     * claimed, waits for a slot: a finished attempt raises the signal.
     */
    const sleep = (passAt: number) =>
      Effect.gen(function*() {
        const next = Option.map(yield* deliveries.nextDue(), Date.parse)
        const now = yield* Clock.currentTimeMillis
        const poll = Duration.toMillis(limits.idlePoll)
        const wait = Option.match(next, {
          onNone: () => poll,
          onSome: (dueAt) => (dueAt <= passAt ? poll : Math.min(Math.max(dueAt - now, 0), poll))
        })
        yield* signal.wait(Duration.millis(wait))
      })

    const pass = Effect.gen(function*() {
      const { at, claimed } = yield* claimDue
      for (const delivery of claimed) yield* FiberSet.run(fibers, attemptInFlight(delivery))
      if (claimed.length === 0) yield* sleep(at)
    }).pipe(surviving("webhook delivery worker", limits.idlePoll))

    return {
      run: Effect.forever(pass),
      wake: signal.raise,
      withNewDelivery: (create, use) =>
        Effect.acquireUseRelease(
          claiming.withPermits(1)(Effect.tap(create, (delivery) => Effect.sync(() => inFlight.add(delivery)))),
          use,
          release
        )
    }
  })
