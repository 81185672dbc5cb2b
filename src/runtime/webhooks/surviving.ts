import { Cause, Duration, Effect } from "effect"

/**
 * Keeps a failure of one pass of a loop (a defect: the Store's errors are) from ending the
 * loop: it is logged, and the pass returns after `pause`, so a lasting failure is retried
 * without spinning. Interruption is not a failure: it still ends the loop.
 */
export const surviving = (what: string, pause: Duration.DurationInput = Duration.zero) => <A, E>(pass: Effect.Effect<A, E>): Effect.Effect<A | void> =>
  Effect.catchAllCause(pass, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.interrupt
      : Effect.zipRight(Effect.logError(`${what} failed`, cause), Effect.sleep(pause)))
