import type { StoreUnavailable } from "../../domain/Errors.js"
import { Clock, Duration, Effect, Option, type Scope } from "effect"
import { DeliveryRepo } from "../ports/store/DeliveryRepo.js"
import type { WebhookRow } from "../ports/store/WebhookRepo.js"
import type { AttemptCallbacks, DeliveryRef } from "./attempt.js"
import type { AttemptResult } from "./deliver.js"
import { surviving } from "./surviving.js"
import { makeWakeSignal } from "./wakeSignal.js"

export interface WorkerLimits {
  /** Attempts in flight at once, over all webhooks. */
  readonly concurrency: number
  /** Attempts in flight at once to one webhook at first, and while its receiver is slow or failing. */
  readonly perWebhookConcurrency: number
  /** The most in flight to one webhook whose receiver answers fast and well while its deliveries wait. */
  readonly perWebhookConcurrencyMax: number
  /** The longest the worker sleeps between looks at the Store when nothing wakes it. */
  readonly idlePoll: Duration.Duration
  /** How long closing the worker waits for the attempts in flight (one attempt's timeout). */
  readonly finishWithin: Duration.Duration
  /** The webhooks whose deliveries this worker attempts (all those of the kept copy, or a cluster runner's share of them). */
  readonly webhooksServed: Effect.Effect<ReadonlyArray<string>, StoreUnavailable>
}

/**
 * Deliveries held per slot of concurrency: claimed in one query and queued in memory, so that
 * the Store is asked once per batch rather than once per attempt.
 */
const CLAIM_AHEAD = 16

/** An answer this quick (and a 2xx) lets its webhook have one more attempt in flight, while it has deliveries waiting. */
const FAST_ANSWER_MS = 250

/** Whether a request's answer lets its webhook have more in flight (if its deliveries wait). */
const answeredWell = (result: AttemptResult) => result.delivered && result.durationMs <= FAST_ANSWER_MS

/**
 * The deliveries the worker holds (claimed and waiting for a slot, being sent, or waiting for
 * their outcome to be written), by webhook: what the claims are checked against, what keeps a
 * delivery from being attempted twice at once, and which may be sent now within the limits.
 * Changed only synchronously. (Waiting deliveries wait here, not as fibers parked on a
 * semaphore: Effect's semaphore wakes every waiter at each release.)
 *
 * Each webhook's limit of attempts in flight adapts to its receiver, as TCP's window does: it
 * starts at `least`, grows by one at each answer that came well and fast while that webhook's
 * deliveries wait (up to `most`), and halves (down to `least`) at each that failed or was slow;
 * it is back at `least` whenever the webhook has nothing waiting or in flight. A fast receiver
 * so takes a backlog at thousands a second; a slow or dead one never has more than `least` in
 * flight. What it may hold claimed ahead follows its limit: when the limit falls, the waiting
 * deliveries beyond it are let go (still pending in the Store, claimed again within its room),
 * so a receiver that goes dark after a fast spell does not keep the worker's room.
 */
class Held {
  private readonly webhookOf = new Map<string, string>()
  private readonly countOf = new Map<string, number>()
  /** Claimed, not yet sent, oldest first; a webhook moves to the end when one of its own is sent (round robin). */
  private readonly waiting = new Map<string, Array<DeliveryRef>>()
  private readonly sendingTo = new Map<string, number>()
  private sending = 0
  /** Limits above `least`, by webhook. */
  private readonly limitOf = new Map<string, number>()
  private readonly most: number

  constructor(private readonly least: number, most: number) {
    this.most = Math.max(least, most)
  }

  get size() {
    return this.webhookOf.size
  }
  /** Whether some claimed delivery waits for a slot. */
  get anyWaiting() {
    return this.waiting.size > 0
  }
  countFor(webhookId: string) {
    return this.countOf.get(webhookId) ?? 0
  }
  /** The attempts the webhook may have in flight now. */
  limitFor(webhookId: string) {
    return this.limitOf.get(webhookId) ?? this.least
  }
  /** The deliveries the webhook may hold, claimed ahead of its slots. */
  capacityFor(webhookId: string) {
    return this.limitFor(webhookId) * CLAIM_AHEAD
  }
  /** The deliveries held, by webhook. */
  idsByWebhook() {
    const ids = new Map<string, Array<string>>()
    for (const [deliveryId, webhookId] of this.webhookOf) {
      const those = ids.get(webhookId)
      if (those === undefined) ids.set(webhookId, [deliveryId])
      else those.push(deliveryId)
    }
    return ids
  }
  /** Holds the delivery, to be sent when a slot frees, unless it is held already or its webhook holds all it may. */
  tryQueue(delivery: DeliveryRef) {
    if (this.webhookOf.has(delivery.id) || this.countFor(delivery.webhookId) >= this.capacityFor(delivery.webhookId)) return false
    this.add(delivery)
    const queue = this.waiting.get(delivery.webhookId)
    if (queue === undefined) this.waiting.set(delivery.webhookId, [delivery])
    else queue.push(delivery)
    return true
  }
  /** Holds a delivery that is sent at once, outside the slots (a test). */
  add(delivery: DeliveryRef) {
    this.webhookOf.set(delivery.id, delivery.webhookId)
    this.countOf.set(delivery.webhookId, this.countFor(delivery.webhookId) + 1)
  }
  /** The waiting deliveries that may be sent now, their slots taken. */
  takeSendable(concurrency: number) {
    const taken: Array<DeliveryRef> = []
    let progress = true
    while (progress && this.sending < concurrency) {
      progress = false
      for (const [webhookId, queue] of this.waiting) {
        if (this.sending >= concurrency) break
        const sending = this.sendingTo.get(webhookId) ?? 0
        if (sending >= this.limitFor(webhookId)) continue
        taken.push(queue.shift()!)
        this.sending++
        this.sendingTo.set(webhookId, sending + 1)
        this.waiting.delete(webhookId)
        if (queue.length > 0) this.waiting.set(webhookId, queue)
        progress = true
      }
    }
    return taken
  }
  /**
   * A slot taken by `takeSendable` is free again; the request's answer, if one was made, moves
   * its webhook's limit. Says how the webhook's room to hold deliveries changed: `grew`, or
   * `shrank` (some waiting ones let go).
   */
  freeSlot(webhookId: string, answer: AttemptResult | undefined): "grew" | "shrank" | undefined {
    this.sending--
    const sending = (this.sendingTo.get(webhookId) ?? 1) - 1
    if (sending > 0) this.sendingTo.set(webhookId, sending)
    else this.sendingTo.delete(webhookId)
    const change = answer === undefined ? undefined : this.adapt(webhookId, answeredWell(answer))
    if (sending === 0 && !this.waiting.has(webhookId)) this.limitOf.delete(webhookId) // idle: back to `least`
    return change
  }
  private adapt(webhookId: string, well: boolean) {
    const limit = this.limitFor(webhookId)
    const next = !well ? Math.max(this.least, Math.floor(limit / 2)) : this.waiting.has(webhookId) ? Math.min(limit + 1, this.most) : limit
    if (next === limit) return undefined
    if (next === this.least) this.limitOf.delete(webhookId)
    else this.limitOf.set(webhookId, next)
    if (next > limit) return "grew"
    this.shedBeyondCapacity(webhookId)
    return "shrank"
  }
  /** Lets go of the webhook's newest waiting deliveries beyond what it may hold now. */
  private shedBeyondCapacity(webhookId: string) {
    const queue = this.waiting.get(webhookId)
    if (queue === undefined) return
    while (queue.length > 0 && this.countFor(webhookId) > this.capacityFor(webhookId)) this.remove(queue.pop()!)
    if (queue.length === 0) this.waiting.delete(webhookId)
  }
  /** Lets the delivery go; says how many its webhook held before. */
  remove(delivery: DeliveryRef) {
    const before = this.countFor(delivery.webhookId)
    if (!this.webhookOf.delete(delivery.id)) return before
    if (before > 1) this.countOf.set(delivery.webhookId, before - 1)
    else this.countOf.delete(delivery.webhookId)
    return before
  }
}

export interface DeliveryWorker {
  /** Runs until interrupted: claims due deliveries and attempts them, within the limits. */
  readonly run: Effect.Effect<never>
  /** Ends the worker's sleep: a delivery was made or became due. */
  readonly wake: Effect.Effect<void>
  /**
   * Deliveries just made, due now and committed: held and started as if claimed, as far as
   * the limits let them; those left over are claimed later, from the Store. While the Store
   * has due deliveries the worker could not hold, it claims instead: the oldest go first.
   */
  readonly take: (made: ReadonlyArray<DeliveryRef>) => Effect.Effect<void, StoreUnavailable>
  /**
   * Makes a delivery and claims it in the same step, so that no pass of the worker takes it;
   * then `use`s it (an immediate attempt) and releases it.
   */
  readonly withNewDelivery: <A, E>(
    create: Effect.Effect<DeliveryRef, E>,
    use: (delivery: DeliveryRef) => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
}

/** How the worker attempts what it claimed. */
export interface Attempting {
  /** The webhooks by id, from the kept copy (one missing was removed), read afresh when the copy is stale. */
  readonly webhooks: Effect.Effect<ReadonlyMap<string, WebhookRow>, StoreUnavailable>
  /** The same while the kept copy is trusted, without going to the Store; else `undefined`. */
  readonly webhooksAtHand: () => ReadonlyMap<string, WebhookRow> | undefined
  /** Starts an attempt and returns at once; the attempt reports through `callbacks`. */
  readonly start: (delivery: DeliveryRef, webhook: WebhookRow | undefined, callbacks: AttemptCallbacks) => void
}

/**
 * The delivery worker. A pass claims, in one query, up to `concurrency × CLAIM_AHEAD` due
 * deliveries (leaving out those it holds and those of webhooks holding their share, so a dead
 * receiver's backlog never hides another's) and queues them by webhook; as slots free
 * (`concurrency` over all, each webhook's adaptive limit per webhook, taken round robin over the
 * webhooks) each is started, its slot given back when its request is done and the delivery let
 * go once its outcome is written. With nothing to claim the worker sleeps until the next
 * delivery is due, it runs low on held deliveries, or it is woken. Closing its scope lets the
 * attempts in flight finish and record their outcome (within `finishWithin`) and starts no
 * more, so a dispatcher handed to another runner does not send them again; an attempt cut off
 * anyway, like every delivery held but not attempted, stays pending and is made after the
 * restart.
 *
 * An attempt is not a fiber: it runs on plain callbacks, and a slot it frees is filled at once
 * in its callback, from the kept copy of the webhooks; when that copy must be read afresh, by
 * one fiber (the starter), which reads it once for all the deliveries that fit.
 */
export const makeDeliveryWorker = (limits: WorkerLimits, attempting: Attempting): Effect.Effect<DeliveryWorker, never, DeliveryRepo | Scope.Scope> =>
  Effect.gen(function*() {
    const deliveries = yield* DeliveryRepo
    const signal = yield* makeWakeSignal
    const slotsFreed = yield* makeWakeSignal
    const claiming = yield* Effect.makeSemaphore(1)
    const held = new Held(limits.perWebhookConcurrency, limits.perWebhookConcurrencyMax)
    const capacity = limits.concurrency * CLAIM_AHEAD
    let closing = false
    /** The last claim left due deliveries in the Store (a full page, or webhooks holding all they may). */
    let leftSome = false
    /**
     * Deliveries `take` held while a claim was under way. Its query may return them too (it
     * left out only those held when it was built); once one is attempted and let go, queueing
     * it from the query's answer would send it a second time.
     */
    let takenDuringClaim: Set<string> | undefined
    /** Attempts started whose outcome is not written yet; and who waits for there to be none. */
    let unwritten = 0
    let allWritten: (() => void) | undefined
    // Runs after the loops that claim and start deliveries have stopped (they run in `run`,
    // which is forked later in the same scope, and finalizers run last-added first).
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Effect.sync(() => void (closing = true)),
        Effect.timeoutOption(
          Effect.async<void>((resume) => {
            if (unwritten === 0) return resume(Effect.void)
            allWritten = () => resume(Effect.void)
            return Effect.sync(() => void (allWritten = undefined))
          }),
          limits.finishWithin
        )
      ))

    /**
     * Lets a delivery go. When the last claim left some behind, wakes the worker as it comes
     * down to half of what it may hold, over all or for the delivery's webhook: claiming then
     * takes many at once rather than one after each attempt.
     */
    const release = (delivery: DeliveryRef) => {
      const before = held.remove(delivery)
      if (leftSome && (held.size === Math.floor(capacity / 2) || before === Math.ceil(held.capacityFor(delivery.webhookId) / 2) + 1)) signal.raiseNow()
    }

    /** An attempt's callbacks: each acts once, and a written outcome frees the slot too if the request had not. */
    const callbacksOf = (delivery: DeliveryRef): AttemptCallbacks => {
      let slotTaken = true
      let inHand = true
      const requestDone = (answer?: AttemptResult) => {
        if (!slotTaken) return
        slotTaken = false
        const room = held.freeSlot(delivery.webhookId, answer)
        // A webhook that may hold more claims now, when some were left in the Store (it may never
        // come down to the half that wakes the worker); one that let some go leaves room to others.
        if (room === "shrank") {
          leftSome = true
          signal.raiseNow()
        } else if (room === "grew" && leftSome) signal.raiseNow()
        const webhooks = attempting.webhooksAtHand()
        if (webhooks === undefined) slotsFreed.raiseNow()
        else startWith(webhooks)
      }
      return {
        requestDone,
        written: () => {
          requestDone()
          if (!inHand) return
          inHand = false
          release(delivery)
          if (--unwritten === 0) allWritten?.()
        }
      }
    }

    /** Starts the waiting deliveries that fit in the free slots (none once the worker is closing). */
    const startWith = (webhooks: ReadonlyMap<string, WebhookRow>) => {
      if (closing) return
      for (const delivery of held.takeSendable(limits.concurrency)) {
        unwritten++
        attempting.start(delivery, webhooks.get(delivery.webhookId), callbacksOf(delivery))
      }
    }
    /** The same, reading the webhooks if need be; nothing to read when no delivery waits. */
    const startWhatFits: Effect.Effect<void, StoreUnavailable> = Effect.suspend(() =>
      held.anyWaiting ? Effect.map(attempting.webhooks, startWith) : Effect.void
    )

    /**
     * Claims what the held deliveries leave room for, of each webhook served: nothing to ask
     * the Store when every one holds all it may, and only when the next pending delivery is
     * due (one indexed look, where the claim asks about each webhook: at rest, with thousands
     * of webhooks, that was most of an idle gateway's CPU). `next`: when the next one is due,
     * if the claim looked.
     */
    const claimDue = claiming.withPermits(1)(Effect.suspend(() => {
      const takenMeanwhile = new Set<string>()
      takenDuringClaim = takenMeanwhile
      return Effect.ensuring(claimNoting(takenMeanwhile), Effect.sync(() => void (takenDuringClaim = undefined)))
    }))
    const claimNoting = (takenMeanwhile: ReadonlySet<string>) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        if (held.size >= capacity) return { claimed: [], at }
        const next = Option.map(yield* deliveries.nextDue(), Date.parse)
        if (Option.isNone(next) || next.value > at) {
          leftSome = false
          return { claimed: [], at, next }
        }
        const served = yield* limits.webhooksServed
        const free = capacity - held.size
        const heldIds = held.idsByWebhook()
        const rooms = served.map((webhookId) => {
          const except = heldIds.get(webhookId) ?? []
          return { webhookId, room: held.capacityFor(webhookId) - except.length, except }
        })
        if (free <= 0 || !rooms.some(({ room }) => room > 0)) {
          leftSome = rooms.length > 0
          return { claimed: [], at }
        }
        const due = yield* deliveries.due(new Date(at).toISOString(), free, rooms)
        const claimed = due.filter((delivery) => !takenMeanwhile.has(delivery.id) && held.tryQueue(delivery))
        const full = new Set(rooms.filter(({ webhookId }) => held.countFor(webhookId) >= held.capacityFor(webhookId)).map(({ webhookId }) => webhookId))
        leftSome = due.length === free || full.size > 0 || claimed.length < due.length
        return { claimed, at }
      })

    /**
     * Sleeps until the next delivery is due. One that was due when the pass looked, yet not
     * claimed, waits for room: a released delivery raises the signal.
     */
    const sleep = (passAt: number, known: Option.Option<number> | undefined) =>
      Effect.gen(function*() {
        const next = known ?? Option.map(yield* deliveries.nextDue(), Date.parse)
        const now = yield* Clock.currentTimeMillis
        const poll = Duration.toMillis(limits.idlePoll)
        const wait = Option.match(next, {
          onNone: () => poll,
          onSome: (dueAt) => (dueAt <= passAt ? poll : Math.min(Math.max(dueAt - now, 0), poll))
        })
        yield* signal.wait(Duration.millis(wait))
      })

    const pass = Effect.gen(function*() {
      const { at, claimed, next } = yield* claimDue
      yield* startWhatFits
      if (claimed.length === 0) yield* sleep(at, next)
    }).pipe(surviving("webhook delivery worker", limits.idlePoll))

    /** The starter: fills the slots that attempts free. */
    const startFreed = Effect.zipRight(slotsFreed.wait(), startWhatFits).pipe(surviving("webhook delivery starter", limits.idlePoll))

    return {
      run: Effect.zipRight(Effect.forever(pass), Effect.forever(startFreed), { concurrent: true }),
      wake: signal.raise,
      take: (made) =>
        Effect.suspend(() => {
          let taken = 0
          if (!leftSome) {
            for (const delivery of made) {
              if (held.size < capacity && held.tryQueue(delivery)) {
                taken++
                takenDuringClaim?.add(delivery.id)
              }
            }
          }
          if (taken < made.length) {
            leftSome = true
            signal.raiseNow()
          }
          return taken === 0 ? Effect.void : startWhatFits
        }),
      withNewDelivery: (create, use) =>
        Effect.acquireUseRelease(
          claiming.withPermits(1)(Effect.tap(create, (delivery) => Effect.sync(() => held.add(delivery)))),
          use,
          (delivery) => Effect.sync(() => release(delivery))
        )
    }
  })
