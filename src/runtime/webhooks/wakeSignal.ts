import { type Duration, Effect, Queue } from "effect"

/**
 * A wake-up for a loop that otherwise sleeps. Never lost (raised while the loop is busy, it ends
 * the loop's next wait at once) and never piling up (raised ten times, it wakes the loop once).
 */
export interface WakeSignal {
  readonly raise: Effect.Effect<void>
  /** `raise`, from outside an effect (an event observer). */
  readonly raiseNow: () => void
  /** Returns when raised, or after `atMost`. */
  readonly wait: (atMost: Duration.DurationInput) => Effect.Effect<void>
}

export const makeWakeSignal: Effect.Effect<WakeSignal> = Effect.map(Queue.dropping<void>(1), (queue) => ({
  raise: Effect.asVoid(Queue.offer(queue, undefined)),
  raiseNow: () => void queue.unsafeOffer(undefined),
  wait: (atMost) => Effect.asVoid(Effect.timeoutOption(Queue.take(queue), atMost))
}))
