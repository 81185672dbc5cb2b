/**
 * `switchboard/cache/redis`: the Cache on Redis, shared by every gateway process that uses it.
 * The layer loads ioredis when it is built, not when this module is imported.
 */
export { redisCache } from "../layers/cache/cacheLayers.js"
export type { RedisCacheOptions } from "../layers/cache/RedisCache.js"
