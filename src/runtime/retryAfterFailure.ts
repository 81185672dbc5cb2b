import { Effect, type Schedule } from "effect"

/**
 * `Effect.retry(effect, options)`, with the retry set up only once `effect` has failed: the
 * same attempts at the same delays (the first failure is handed to the schedule as it would
 * have been). For the hot path, where the effect nearly always succeeds and a schedule made up
 * front (a driver, its state, the catch around it: ~35 Effect operations) costs more than the
 * work it guards.
 */
export const retryAfterFailure = <A, E, R, Out, RS>(
  effect: Effect.Effect<A, E, R>,
  options: { readonly schedule: Schedule.Schedule<Out, E, RS>; readonly while: (error: E) => boolean }
): Effect.Effect<A, E, R | RS> =>
  Effect.catchIf(effect, options.while, (first) => {
    let replayed = false
    return Effect.retry(Effect.suspend(() => (replayed ? effect : (replayed = true, Effect.fail(first)))), options)
  })
