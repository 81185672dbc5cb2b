import { Deferred, Effect, Option } from "effect"
import type { EngineConnection } from "./Engine.js"

/** A session's connection while it is ready: what its outbound lane waits for. */
export interface ReadyConnection {
  /** The connection became ready (some), or is ready no longer (none). */
  readonly set: (connection: Option.Option<EngineConnection>) => Effect.Effect<void>
  /** The ready connection, as soon as there is one. */
  readonly await: Effect.Effect<EngineConnection>
}

/**
 * A plain slot, and a Deferred made only while someone waits: every session has one, idle or
 * not, and the SubscriptionRef it replaces (a PubSub, a semaphore) was ~2.9 KB per session.
 */
export const makeReadyConnection = (): ReadyConnection => {
  let current = Option.none<EngineConnection>()
  let waiting: Deferred.Deferred<EngineConnection> | undefined
  return {
    set: (connection) =>
      Effect.suspend(() => {
        current = connection
        const waiters = waiting
        if (Option.isNone(connection) || waiters === undefined) return Effect.void
        waiting = undefined
        return Deferred.succeed(waiters, connection.value)
      }),
    await: Effect.suspend(() => {
      if (Option.isSome(current)) return Effect.succeed(current.value)
      if (waiting !== undefined) return Deferred.await(waiting)
      return Effect.flatMap(Deferred.make<EngineConnection>(), (made) => Deferred.await(waiting ??= made))
    })
  }
}
