import { Duration, Effect } from "effect"

/**
 * A wake-up for a loop that otherwise sleeps. Never lost (raised while the loop is busy, it ends
 * the loop's next wait at once) and never piling up (raised ten times, it wakes the loop once).
 */
export interface WakeSignal {
  readonly raise: Effect.Effect<void>
  /** `raise`, from outside an effect (an event observer, a request's callback). */
  readonly raiseNow: () => void
  /** Returns when raised, or after `atMost` (never, when `undefined`). */
  readonly wait: (atMost?: Duration.DurationInput) => Effect.Effect<void>
}

/**
 * A flag and the waiters' callbacks, with a plain timer for `atMost`: the loops wait once per
 * pass, and a queue's take under `Effect.timeoutOption` costs two forked fibers every time.
 */
export const makeWakeSignal: Effect.Effect<WakeSignal> = Effect.sync(() => {
  let raised = false
  const waiters = new Set<() => void>()
  const raiseNow = () => {
    if (waiters.size === 0) {
      raised = true
      return
    }
    const woken = [...waiters]
    waiters.clear()
    for (const wake of woken) wake()
  }
  const wait = (atMost?: Duration.DurationInput) =>
    Effect.async<void>((resume) => {
      if (raised) {
        raised = false
        return resume(Effect.void)
      }
      let timer: ReturnType<typeof setTimeout> | undefined
      const wake = () => {
        clearTimeout(timer)
        waiters.delete(wake)
        resume(Effect.void)
      }
      waiters.add(wake)
      if (atMost !== undefined) timer = setTimeout(wake, Duration.toMillis(atMost))
      return Effect.sync(() => {
        clearTimeout(timer)
        waiters.delete(wake)
      })
    })
  return { raise: Effect.sync(raiseNow), raiseNow, wait }
})
