import { Clock, Duration, Effect, Option, Random } from "effect"
import type { PacingSettings } from "../domain/Settings.js"
import { Cache, type CacheService } from "./ports/Cache.js"

/** Jitter only ever slows down: a session never sends faster than its rate. */
const JITTER_MAX = 1.3

export interface Pacer {
  /**
   * Runs `send` in the session's next turn: after the previous send's end plus the pause (the
   * interval of the rate, jittered), at once when that has passed.
   */
  readonly paced: <A, E, R>(send: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** The caches whose failure the pacing has logged: once an outage, for all sessions. */
const unavailableLogged = new WeakSet<CacheService>()

/**
 * The pause between a session's sends. Bursts of sends from a fresh number are what gets
 * accounts banned; spacing them at a human-ish rate, irregularly, is what the gateway does
 * for the caller, who only queues.
 *
 * The turns are slots reserved in the `Cache` (`pacing:<sessionId>`), so gateways sharing a
 * Redis pace a session together. A send's turn is reserved just before it goes out; when it
 * is done, the next slot is pushed back by the time it took (up to a jittered interval), so the pause
 * runs from the send's end as a human's would. The lane also keeps its own copy of when the
 * next turn is, the floor it falls back to (with jitter) while the cache cannot be reached:
 * pacing never goes faster for losing the cache.
 */
export const makePacer = (sessionId: string, pacing: PacingSettings): Effect.Effect<Pacer, never, Cache> =>
  Effect.gen(function*() {
    if (pacing.sendsPerMinute <= 0) return { paced: (send) => send }
    const cache = yield* Cache
    const key = `pacing:${sessionId}`
    const interval = 60_000 / pacing.sendsPerMinute
    const jitterMax = interval * (JITTER_MAX - 1)
    /** When this lane's next turn is at the earliest (its own clock). */
    let localNext = 0

    const shared = <A>(operation: Effect.Effect<A, unknown>) =>
      operation.pipe(
        Effect.tap(() =>
          unavailableLogged.delete(cache) ? Effect.logInfo("pacing: the cache answers again; sessions are paced through it") : Effect.void
        ),
        Effect.asSome,
        Effect.catchAll((error) =>
          Effect.as(
            unavailableLogged.has(cache)
              ? Effect.void
              : Effect.sync(() => unavailableLogged.add(cache)).pipe(
                Effect.zipRight(Effect.logWarning("pacing: the cache is unavailable; each process paces its sessions on its own", error))
              ),
            Option.none()
          ))
      )

    /** Reserves the turn and waits for it. */
    const awaitTurn = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const local = Math.max(0, localNext - now)
      const reserved = yield* shared(cache.reserveSlot(key, interval, jitterMax))
      const wait = Option.match(reserved, { onNone: () => local, onSome: (wait) => Math.max(wait, local) })
      // without the cache the jitter is the lane's own; with it, the cache's reservation carries it
      localNext = now + wait + interval + (Option.isNone(reserved) ? (yield* Random.next) * jitterMax : 0)
      if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
      return now + wait
    })

    /** After a send that took `elapsed`: the next turn is a pause after its end, not its start. */
    const pushBack = (elapsed: number) =>
      Effect.gen(function*() {
        if (elapsed <= 0) return
        const push = Math.min(elapsed, interval + jitterMax)
        const now = yield* Clock.currentTimeMillis
        localNext = Math.max(now, localNext) + push
        yield* shared(cache.reserveSlot(key, push))
      })

    return {
      paced: <A, E, R>(send: Effect.Effect<A, E, R>) =>
        Effect.flatMap(awaitTurn, (start) =>
          Effect.ensuring(send, Effect.flatMap(Clock.currentTimeMillis, (end) => pushBack(end - start))))
    }
  })
