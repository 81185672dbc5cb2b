import { Duration, Effect, Option, Random, Runtime } from "effect"
import { Redis } from "ioredis"
import { KEY_PREFIX } from "./cacheLayers.js"
import { type CacheService, CacheUnavailable } from "../../runtime/ports/Cache.js"
import { fromJson, toJson } from "./json.js"

export interface RedisCacheOptions {
  /** `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS. */
  readonly url: string
  /** Prepended to every key; default `switchboard:`. */
  readonly prefix?: string | undefined
  /** How long one command may take before it fails (and the connection is renewed); default 1 s. */
  readonly commandTimeoutMs?: number | undefined
  /** How long the layer waits for a first connection before it carries on without one; default 5 s. */
  readonly startupWaitMs?: number | undefined
}

/**
 * The next slot of a sequence, on Redis' clock (the processes sharing it may disagree on the
 * time; Redis is one clock for all of them). ARGV[1]: the slot's length in ms, jitter included.
 * Returns how many ms from now the slot begins.
 */
const RESERVE_SLOT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local taken = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local slot = math.max(now, taken)
local after = slot + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%d', after), 'PX', string.format('%d', math.max(1, after - now)))
return slot - now
`

/** One hit in a fixed window that starts with the first; ARGV[1]: the window in ms. Returns {count, ms left}. */
const HIT = `
local count = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {count, left}
`

interface Scripts {
  switchboardReserveSlot(key: string, length: string): Promise<number>
  switchboardHit(key: string, windowMs: string): Promise<[number, number]>
}

/** Where the cache is, for log lines: never the credentials. */
export const redisTarget = (url: string) => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.hostname}:${parsed.port || "6379"}${parsed.pathname === "/" ? "" : parsed.pathname}`
  } catch {
    return "redis (unparsable URL)"
  }
}

/**
 * Redis through ioredis. Commands are never queued while the connection is down: they fail at
 * once with `CacheUnavailable` (and one that hangs fails after the command timeout), so a
 * caller falls back instead of waiting. The client reconnects by itself in the background;
 * losing and regaining the connection is logged once each.
 */
export const makeRedisCache = (options: RedisCacheOptions) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const target = redisTarget(options.url)
    const log = (effect: Effect.Effect<void>) => Runtime.runFork(runtime)(effect.pipe(Effect.annotateLogs("cache", target)))
    const prefix = options.prefix ?? KEY_PREFIX

    /** Set when the layer closes: the connection ending then is no news. */
    let closing = false
    const redis = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Redis(options.url, {
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          commandTimeout: options.commandTimeoutMs ?? 1_000,
          connectTimeout: 5_000,
          retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 10), 5_000),
          connectionName: "switchboard"
        })
      ),
      (redis) =>
        Effect.gen(function*() {
          closing = true
          yield* Effect.promise(() => redis.quit().then(() => undefined, () => undefined)).pipe(Effect.timeout("2 seconds"), Effect.ignore)
          redis.disconnect()
        })
    )
    redis.defineCommand("switchboardReserveSlot", { numberOfKeys: 1, lua: RESERVE_SLOT })
    redis.defineCommand("switchboardHit", { numberOfKeys: 1, lua: HIT })
    const scripts = redis as unknown as Scripts

    /** `undefined` until the first connection attempt has an outcome. */
    let up: boolean | undefined
    redis.on("ready", () => {
      if (up !== true) log(up === undefined ? Effect.logInfo("cache: redis connected") : Effect.logInfo("cache: redis reachable again"))
      up = true
    })
    const lost = (error?: Error) => {
      if (up === false || closing) return
      const what = up === undefined ? "not reachable" : "connection lost"
      log(Effect.logWarning(`cache: redis ${what} (${error?.message ?? "connection closed"}); carrying on without it`))
      up = false
    }
    redis.on("error", lost)
    redis.on("close", () => {
      if (up === true) lost()
    })

    const waitForReady = Effect.async<void>((resume) => {
      if (redis.status === "ready") return resume(Effect.void)
      const onReady = () => resume(Effect.void)
      redis.once("ready", onReady)
      return Effect.sync(() => void redis.off("ready", onReady))
    })
    yield* waitForReady.pipe(Effect.timeout(Duration.millis(options.startupWaitMs ?? 5_000)), Effect.ignore)

    const attempt = <A>(operation: string, run: () => Promise<A>) =>
      Effect.tryPromise({
        try: run,
        catch: (cause) => {
          // A command that got no answer: the connection is renewed, so the next ones fail
          // at once while it is down instead of each waiting for the timeout.
          if (cause instanceof Error && cause.message === "Command timed out") redis.disconnect(true)
          return new CacheUnavailable({ operation, cause })
        }
      })

    const key = (name: string) => prefix + name

    const cache: CacheService = {
      backend: "redis",
      get: <A>(name: string) =>
        Effect.map(attempt("get", () => redis.get(key(name))), (text) => text === null ? Option.none<A>() : fromJson<A>(text)),
      set: (name, value, ttl) =>
        Effect.flatMap(toJson(value), (json) =>
          attempt("set", () => redis.set(key(name), json, "PX", Math.max(1, Math.ceil(Duration.toMillis(ttl)))))),
      delete: (name) => Effect.asVoid(attempt("delete", () => redis.del(key(name)))),
      reserveSlot: (name, intervalMs, jitterMaxMs = 0) =>
        Effect.gen(function*() {
          const jitter = jitterMaxMs > 0 ? (yield* Random.next) * jitterMaxMs : 0
          const length = String(Math.ceil(intervalMs + jitter))
          return Number(yield* attempt("reserveSlot", () => scripts.switchboardReserveSlot(key(name), length)))
        }),
      hit: (name, limit, windowMs) =>
        Effect.map(
          attempt("hit", () => scripts.switchboardHit(key(name), String(Math.max(1, Math.ceil(windowMs))))),
          ([count, left]) => ({ allowed: count <= limit, remaining: Math.max(0, limit - count), resetMs: Number(left) })
        ),
      ping: Effect.asVoid(attempt("ping", () => redis.ping()))
    }
    return cache
  })
