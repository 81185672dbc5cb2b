import { Context, Effect, Layer, type Scope } from "effect"

/**
 * What keeps the copies each process caches (API key lookups) in step with changes made by
 * another process of the same gateway. In one process there is no one to tell; in a cluster
 * every runner hears of every change at once.
 */
export class CachedCopies extends Context.Tag("switchboard/CachedCopies")<CachedCopies, {
  /** Tells the other processes that their copies of `topic` are stale. */
  readonly changed: (topic: string) => Effect.Effect<void>
  /** Runs `forget` whenever another process says `topic` changed, for the life of the scope. */
  readonly onChange: (topic: string, forget: Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}>() {
  static readonly singleProcess = Layer.succeed(CachedCopies, {
    changed: () => Effect.void,
    onChange: () => Effect.void
  })
}
