import { Effect, PubSub, Stream } from "effect"

/** A value, and its changes for whoever watches it. */
export interface WatchedState<A> {
  readonly get: Effect.Effect<A>
  readonly set: (value: A) => Effect.Effect<void>
  readonly update: (f: (value: A) => A) => Effect.Effect<void>
  /** The value now, then each new one, for as long as the stream is consumed. */
  readonly changes: Stream.Stream<A>
}

/**
 * A plain value, and the PubSub that carries its changes made only once someone watches:
 * every running session has one, few are ever watched, and the SubscriptionRef it replaces
 * (a PubSub and a semaphore, made up front) was ~2.9 KB per session.
 */
export const makeWatchedState = <A>(initial: A): WatchedState<A> => {
  let value = initial
  let watchers: PubSub.PubSub<A> | undefined
  const set = (next: A) =>
    Effect.suspend(() => {
      value = next
      return watchers === undefined ? Effect.void : Effect.asVoid(PubSub.publish(watchers, next))
    })
  const hub = Effect.suspend(() =>
    watchers !== undefined ? Effect.succeed(watchers) : Effect.map(PubSub.unbounded<A>(), (made) => (watchers ??= made))
  )
  return {
    get: Effect.sync(() => value),
    set,
    update: (f) => Effect.suspend(() => set(f(value))),
    // Subscribed before the value is read: a change in between shows twice at most, never not at all.
    changes: Stream.unwrapScoped(Effect.flatMap(hub, (pubsub) =>
      Effect.map(PubSub.subscribe(pubsub), (subscription) => Stream.concat(Stream.succeed(value), Stream.fromQueue(subscription)))))
  }
}
