import { Effect, Schedule } from "effect"
import { StoreUnavailable } from "../domain/Errors.js"
import { retryAfterFailure } from "./retryAfterFailure.js"

/** Every 100 ms, doubling, at most every 5 s: for as long as the Store is down. */
const storeRetry = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))

const isOutage = (error: unknown): error is StoreUnavailable => error instanceof StoreUnavailable

/**
 * Runs `effect` again, for as long as it fails because the Store is down, until it gets
 * through. For work that must not be dropped (what the network handed over, the sandbox
 * network's own bookkeeping); whatever waits on it waits meanwhile, which is the
 * back-pressure wanted. Other failures pass through unchanged.
 * It wraps every send and every receipt: the retry is set up only after a first outage.
 */
export const untilStoreIsBack = <A, E, R>(
  effect: Effect.Effect<A, E | StoreUnavailable, R>,
  what: string
): Effect.Effect<A, Exclude<E, StoreUnavailable>, R> => {
  const attempt = Effect.tapError(effect, (error) =>
    isOutage(error) ? Effect.logWarning(`the Store is unreachable; ${what} waits until it is back`) : Effect.void)
  return retryAfterFailure(attempt, { schedule: storeRetry, while: isOutage }).pipe(
    // The retry above never gives up on an outage, so none is left here.
    Effect.catchIf(isOutage, (outage) => Effect.die(outage))
  ) as Effect.Effect<A, Exclude<E, StoreUnavailable>, R>
}
