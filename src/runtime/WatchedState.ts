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
 * (a PubSub and a semaphore, made up front) was ~1.5 KB per session as the actor held it. A
 * class, so that an instance is two fields, its operations shared on the prototype.
 */
class Watched<A> implements WatchedState<A> {
  private watchers: PubSub.PubSub<A> | undefined = undefined

  constructor(private value: A) {}

  get get(): Effect.Effect<A> {
    return Effect.sync(() => this.value)
  }

  set(next: A): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.value = next
      return this.watchers === undefined ? Effect.void : Effect.asVoid(PubSub.publish(this.watchers, next))
    })
  }

  update(f: (value: A) => A): Effect.Effect<void> {
    return Effect.suspend(() => this.set(f(this.value)))
  }

  get changes(): Stream.Stream<A> {
    const hub = Effect.suspend(() =>
      this.watchers !== undefined ? Effect.succeed(this.watchers) : Effect.map(PubSub.unbounded<A>(), (made) => (this.watchers ??= made))
    )
    // Subscribed before the value is read: a change in between shows twice at most, never not at all.
    return Stream.unwrapScoped(Effect.flatMap(hub, (pubsub) =>
      Effect.map(PubSub.subscribe(pubsub), (subscription) => Stream.concat(Stream.succeed(this.value), Stream.fromQueue(subscription)))))
  }
}

export const makeWatchedState = <A>(initial: A): WatchedState<A> => new Watched(initial)
