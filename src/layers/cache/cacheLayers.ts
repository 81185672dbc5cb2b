import { Effect, Layer } from "effect"
import type { Settings } from "../../domain/Settings.js"
import { Cache } from "../../runtime/ports/Cache.js"
import { makeMemoryCache } from "./MemoryCache.js"
import type { RedisCacheOptions } from "./RedisCache.js"

/** Every key the gateway writes starts with this, so one Redis can be shared with others. */
export const KEY_PREFIX = "switchboard:"

/** A cache in this process only: a map with expiry, on Effect's `Clock`. */
export const memoryCache = (): Layer.Layer<Cache> => Layer.effect(Cache, Effect.suspend(() => makeMemoryCache))

/** Redis, shared by every process that uses it; disconnects when the layer's scope closes. */
export const redisCache = (options: RedisCacheOptions): Layer.Layer<Cache> =>
  // ioredis is loaded only for a gateway that uses Redis.
  Layer.scoped(Cache, Effect.flatMap(Effect.promise(() => import("./RedisCache.js")), ({ makeRedisCache }) => makeRedisCache(options)))

/** `memory` or `redis://…` / `rediss://…`. */
export const cacheFromUrl = (url: string): Layer.Layer<Cache> =>
  url === "memory"
    ? memoryCache()
    : /^rediss?:\/\//.test(url)
    ? redisCache({ url })
    : Layer.die(new Error(`CACHE_URL ${url.split(/[:/]/)[0]}…: use memory or redis://host:port`))

/** The cache named by `CACHE_URL`. */
export const cacheFromSettings = (settings: Pick<Settings, "cacheUrl">): Layer.Layer<Cache> => cacheFromUrl(settings.cacheUrl)
