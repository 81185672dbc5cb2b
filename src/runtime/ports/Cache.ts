import { Context, Data, type Duration, type Effect, type Option } from "effect"

/**
 * What the gateway caches (group metadata, LID lookups) and the counters of its limits (send
 * pacing, rate limits). In memory by default; in Redis (`CACHE_URL=redis://…`) several gateway
 * processes share it, and with it their limits. Values are JSON; every entry expires.
 *
 * A cache is never the only copy of anything: when it cannot be reached its operations fail
 * with `CacheUnavailable`, and each caller carries on without it (fetches afresh, paces
 * locally).
 */
export interface CacheService {
  readonly backend: "memory" | "redis"
  /** The value stored under `key`, if there is one and it has not expired. */
  readonly get: <A = unknown>(key: string) => Effect.Effect<Option.Option<A>, CacheUnavailable>
  /** Stores a JSON value (what `JSON.stringify` keeps of it) for `ttl`. */
  readonly set: (key: string, value: unknown, ttl: Duration.DurationInput) => Effect.Effect<void, CacheUnavailable>
  /** Idempotent. */
  readonly delete: (key: string) => Effect.Effect<void, CacheUnavailable>
  /**
   * Takes the next free slot of a sequence in which slots are at least `intervalMs` (plus a
   * random `0 … jitterMaxMs`) apart, and says how many milliseconds from now it begins: 0 when
   * the sequence is idle. Atomic: callers sharing the cache, in any number of processes, never
   * get two slots closer than the interval. The slot itself expires once it has passed.
   */
  readonly reserveSlot: (key: string, intervalMs: number, jitterMaxMs?: number) => Effect.Effect<number, CacheUnavailable>
  /**
   * Counts one hit in a fixed window of `windowMs` that starts with the first hit on `key`:
   * allowed while the window has seen at most `limit` hits (this one included).
   */
  readonly hit: (key: string, limit: number, windowMs: number) => Effect.Effect<RateLimitResult, CacheUnavailable>
  /** Whether the cache answers (for health checks); the memory cache always does. */
  readonly ping: Effect.Effect<void, CacheUnavailable>
}

export interface RateLimitResult {
  readonly allowed: boolean
  /** Hits left in the window after this one. */
  readonly remaining: number
  /** Milliseconds until the window ends and the count starts over. */
  readonly resetMs: number
}

export class CacheUnavailable extends Data.TaggedError("CacheUnavailable")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message() {
    const reason = this.cause instanceof Error ? `: ${this.cause.message}` : ""
    return `cache unavailable: ${this.operation} failed${reason}`
  }
}

export class Cache extends Context.Tag("switchboard/Cache")<Cache, CacheService>() {}
