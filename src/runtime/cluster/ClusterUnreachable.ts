import { Cause, Data, Effect } from "effect"

/**
 * The runner that hosts a session (or the webhook dispatcher) could not be reached in time:
 * it died and its shard has not moved yet, or the cluster cannot reach its storage. Raised as
 * a defect and answered as a 503 `SERVICE_UNAVAILABLE`: the caller may try again shortly.
 */
export class ClusterUnreachable extends Data.TaggedError("ClusterUnreachable")<{ readonly what: string }> {
  override get message() {
    return `${this.what} cannot be reached in the cluster right now; try again shortly`
  }
}

/**
 * Recovers from whatever went wrong on the way to another runner: a failure, a timeout, or a
 * defect (a socket to a runner that just died fails with one). Interruption is not recovered
 * from: it is the caller going away.
 */
export const whenUnreachable = <A, E, B, E2>(onUnreachable: (cause: Cause.Cause<E>) => Effect.Effect<B, E2>) =>
(effect: Effect.Effect<A, E>): Effect.Effect<A | B, E2> =>
  Effect.catchAllCause(effect, (cause) =>
    // An interruption only carries no failure of type E.
    Cause.isInterruptedOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : onUnreachable(cause))
