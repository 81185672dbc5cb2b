import { Clock, Duration, Effect, Option, Random } from "effect"
import type { CacheService } from "../../runtime/ports/Cache.js"
import { fromJson, toJson } from "./json.js"

interface Entry {
  /** JSON text, as Redis would keep it: a reader never shares an object with the writer. */
  value: string
  expiresAt: number
}

/** Expired entries are dropped when read, and all of them every this many writes. */
const SWEEP_EVERY = 1_000

/**
 * The cache of one process: a map with expiry. Time is Effect's `Clock`, so a TestClock drives
 * expiry and slots exactly as it drives the sleeps that wait for them.
 */
export const makeMemoryCache: Effect.Effect<CacheService> = Effect.sync(() => {
  const entries = new Map<string, Entry>()
  let writes = 0

  const live = (key: string, now: number): Entry | undefined => {
    const entry = entries.get(key)
    if (entry === undefined || entry.expiresAt > now) return entry
    entries.delete(key)
    return undefined
  }

  const write = (key: string, value: string, expiresAt: number, now: number) => {
    entries.set(key, { value, expiresAt })
    if (++writes % SWEEP_EVERY !== 0) return
    for (const [k, entry] of entries) if (entry.expiresAt <= now) entries.delete(k)
  }

  const numberAt = (key: string, now: number) => {
    const entry = live(key, now)
    return entry === undefined ? undefined : Number(entry.value)
  }

  return {
    backend: "memory",
    get: <A>(key: string) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        Option.flatMap(Option.fromNullable(live(key, now)), (entry) => fromJson<A>(entry.value))),
    set: (key, value, ttl) =>
      Effect.flatMap(toJson(value), (json) =>
        Effect.map(Clock.currentTimeMillis, (now) => write(key, json, now + Math.max(1, Duration.toMillis(ttl)), now))),
    delete: (key) => Effect.sync(() => void entries.delete(key)),
    reserveSlot: (key, intervalMs, jitterMaxMs = 0) =>
      Effect.gen(function*() {
        const jitter = jitterMaxMs > 0 ? (yield* Random.next) * jitterMaxMs : 0
        const now = yield* Clock.currentTimeMillis
        const slot = Math.max(now, numberAt(key, now) ?? 0)
        const next = slot + Math.ceil(intervalMs + jitter)
        write(key, String(next), next, now)
        return slot - now
      }),
    hit: (key, limit, windowMs) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = live(key, now)
        const count = entry === undefined ? 1 : Number(entry.value) + 1
        const resetAt = entry?.expiresAt ?? now + Math.max(1, windowMs)
        write(key, String(count), resetAt, now)
        return { allowed: count <= limit, remaining: Math.max(0, limit - count), resetMs: resetAt - now }
      }),
    ping: Effect.void
  }
})
