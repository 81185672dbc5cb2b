import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { Cache } from "../layers/cache/Cache.js"
import { toErrorBody } from "../services/Errors.js"
import { credentialOf } from "./Authentication.js"

/** Paths a monitor or a browser must always reach: health probes and the API reference. */
const exempt = (path: string) => path.startsWith("/api/health") || path.startsWith("/api/docs") || path === "/api/openapi.json"

const WINDOW_MS = 60_000

/**
 * At most `perMinute` requests a minute per API key (per address for requests without one),
 * counted in the cache layer: gateways sharing a Redis share the limit. Over it: 429
 * RATE_LIMITED with `Retry-After`; every counted answer carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset`. If the cache cannot be reached the request is
 * let through (and the cache's own outage shows on /api/health/ready).
 */
export const RateLimiting = (perMinute: number) =>
  HttpApiBuilder.middleware(Effect.gen(function*() {
    const cache = yield* Cache
    return (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (perMinute <= 0 || exempt(new URL(request.url, "http://gateway").pathname)) return yield* app
        const credential = credentialOf(request)
        const bucket = credential === ""
          ? `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
          : `key:${createHash("sha256").update(credential).digest("hex").slice(0, 32)}`
        const counted = yield* Effect.option(cache.hit(`ratelimit:${bucket}`, perMinute, WINDOW_MS))
        if (Option.isNone(counted)) return yield* app
        const { allowed, remaining, resetMs } = counted.value
        const resetSeconds = String(Math.max(1, Math.ceil(resetMs / 1000)))
        const headers = { "ratelimit-limit": String(perMinute), "ratelimit-remaining": String(remaining), "ratelimit-reset": resetSeconds }
        if (!allowed) {
          return HttpServerResponse.unsafeJson(
            toErrorBody(429, { code: "RATE_LIMITED", message: `more than ${perMinute} requests a minute; try again in ${resetSeconds} s` }),
            { status: 429, headers: { ...headers, "retry-after": resetSeconds } }
          )
        }
        return HttpServerResponse.setHeaders(yield* app, headers)
      })
  }))
