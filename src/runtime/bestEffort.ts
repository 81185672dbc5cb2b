import { Cause, Effect } from "effect"

/**
 * For a step whose failure must not undo or stop what it follows (a cache refresh after a
 * change the network already made, a last save before a socket closes): any failure, typed or
 * a defect (the Store's errors are defects, or a typed `StoreUnavailable`), is logged as a
 * warning about `what` and the step yields nothing. `Effect.ignore` is not enough: it lets
 * defects through. Interruption is not a failure and is not logged.
 */
export const bestEffort = (what: string) => <A, E, R>(step: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  Effect.catchAllCause(Effect.asVoid(step), (cause) =>
    Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logWarning(`${what} failed`, cause))
