import { Data, Effect, Option, Schedule } from "effect"

/** The Store could not be reached (the repositories turn its errors into defects). */
class StoreOutage extends Data.TaggedError("StoreOutage")<{ readonly cause: unknown }> {}

const isStoreOutage = (defect: unknown) =>
  typeof defect === "object" && defect !== null && (defect as { readonly _tag?: unknown })._tag === "SqlError"

/** Every 100 ms, doubling, at most every 5 s: for as long as the Store is down. */
const storeRetry = Schedule.exponential("100 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")))

/**
 * Runs `effect` again, for as long as it fails because the Store is down, until it gets
 * through. For work that must not be dropped (what the network handed over, the sandbox
 * network's own bookkeeping); whatever waits on it waits meanwhile, which is the
 * back-pressure wanted. Other failures pass through unchanged.
 */
export const untilStoreIsBack = <A, E, R>(effect: Effect.Effect<A, E, R>, what: string): Effect.Effect<A, E, R> =>
  effect.pipe(
    Effect.catchSomeDefect((defect) => isStoreOutage(defect) ? Option.some(Effect.fail(new StoreOutage({ cause: defect }))) : Option.none()),
    Effect.tapError((error) => error instanceof StoreOutage ? Effect.logWarning(`the Store is unreachable; ${what} waits until it is back`) : Effect.void),
    Effect.retry({ schedule: storeRetry, while: (error) => error instanceof StoreOutage }),
    Effect.catchIf((error): error is StoreOutage => error instanceof StoreOutage, (outage) => Effect.die(outage.cause))
  ) as Effect.Effect<A, E, R>
