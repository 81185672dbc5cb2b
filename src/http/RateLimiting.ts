import { Effect, Option } from "effect"
import { Cache } from "../runtime/ports/Cache.js"

/** What a request's rate limit said, for the `RateLimit-*` headers of its answer. */
export interface RateLimitVerdict {
  readonly limit: number
  readonly remaining: number
  readonly resetSeconds: number
  readonly allowed: boolean
}

export const rateLimitHeaders = (verdict: RateLimitVerdict): Record<string, string> => {
  const headers: Record<string, string> = {
    "ratelimit-limit": String(verdict.limit),
    "ratelimit-remaining": String(verdict.remaining),
    "ratelimit-reset": String(verdict.resetSeconds)
  }
  if (!verdict.allowed) headers["retry-after"] = String(verdict.resetSeconds)
  return headers
}

const WINDOW_MS = 60_000

/**
 * Requests a minute per bucket (an API key, or an address that sent no valid key), counted in
 * the cache layer, so gateways sharing a Redis share the limit. `None` when there is no limit
 * (0) or the cache cannot be reached: a cache outage lets requests through (and shows on
 * /api/health/ready) rather than locking everyone out.
 */
export const makeRateLimiter = Effect.gen(function*() {
  const cache = yield* Cache
  return (bucket: string, perMinute: number): Effect.Effect<Option.Option<RateLimitVerdict>> =>
    perMinute <= 0
      ? Effect.succeedNone
      : cache.hit(`ratelimit:${bucket}`, perMinute, WINDOW_MS).pipe(
        Effect.map(({ allowed, remaining, resetMs }) =>
          Option.some({ limit: perMinute, remaining, resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)), allowed })
        ),
        Effect.orElseSucceed(() => Option.none())
      )
})
