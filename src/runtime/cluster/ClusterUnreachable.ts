import { Data } from "effect"

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
