import { Headers, HttpApp, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Exit, FiberRef, Layer, Option, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import { AppSettings } from "../domain/Settings.js"
import { ApiKeys, hashApiKey } from "../services/ApiKeys.js"
import type { Principal } from "../domain/Principal.js"
import { Authentication } from "./Authentication.js"
import { Sessions } from "../services/Sessions.js"
import { Forbidden, RateLimited, Unauthorized } from "../domain/Errors.js"
import { normalizeAddress } from "../domain/cidr.js"
import { checkRole, requireSession } from "./AccessPolicy.js"
import { matchedEndpoint } from "./Endpoints.js"
import { makeRateLimiter, rateLimitHeaders, type RateLimitVerdict } from "./RateLimiting.js"
import { authenticatedCaller, currentRequest } from "./RequestTracking.js"

/** `X-API-Key: <key>`, or else `Authorization: Bearer <key>`; empty when neither is sent. */
export const credentialOf = (request: HttpServerRequest.HttpServerRequest) =>
  Option.getOrElse(
    Option.orElse(
      Headers.get(request.headers, "x-api-key"),
      () => Option.map(Headers.get(request.headers, "authorization"), (value) => value.replace(/^Bearer\s+/i, ""))
    ),
    () => ""
  ).trim()

type Admission = Exit.Exit<Principal, Unauthorized | Forbidden | RateLimited>

const sameSecret = (a: string, b: string) => timingSafeEqual(Buffer.from(hashApiKey(a), "hex"), Buffer.from(hashApiKey(b), "hex"))

/** Who `METRICS_TOKEN` stands for: it opens `GET /api/metrics` and nothing else. */
const metricsScraper: Principal = {
  keyId: "METRICS_TOKEN",
  name: "metrics token",
  role: "viewer",
  allowedSessions: [],
  allowedIps: null,
  rateLimitPerMinute: 0
}

/**
 * Every route but health and the API reference goes through here, after the route is known
 * and before its input is read. In order: the key (401), the key's addresses (403
 * IP_NOT_ALLOWED), its rate limit (429; an address sending no valid key is limited by
 * address), the role the endpoint declares (403) and its sessions (403). The key is reported
 * (`authenticatedCaller`) for the audit and access logs, and the rate limit goes on the answer's
 * headers.
 */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const settings = yield* AppSettings
    const sessions = yield* Sessions
    const rateLimit = yield* makeRateLimiter
    const metricsToken = Option.map(settings.security.metricsToken, Redacted.value)
    // HttpApi tries the two schemes in turn; both stand for the same check, made once a request.
    const admissions = new WeakMap<object, Admission>()

    const overLimit = (resetSeconds: number) =>
      new RateLimited({ code: "RATE_LIMITED", message: `too many requests; try again in ${resetSeconds} s` })

    const identified = (principal: Principal) => FiberRef.set(authenticatedCaller, Option.some(principal))
    /** The `RateLimit-*` headers go on whatever the request is answered, refusals included. */
    const announce = (verdict: Option.Option<RateLimitVerdict>) =>
      Option.match(verdict, {
        onNone: () => Effect.void,
        onSome: (verdict) =>
          HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeaders(response, rateLimitHeaders(verdict))))
      })

    const admit: Effect.Effect<Principal, Unauthorized | Forbidden | RateLimited, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext> = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { params } = yield* HttpRouter.RouteContext
      const matched = yield* FiberRef.get(matchedEndpoint)
      // Every route is wrapped so that its endpoint is known here (Server.ts); without one, no
      // declared role can be checked, and letting the call through would fail open.
      if (Option.isNone(matched)) return yield* Effect.dieMessage("authentication ran outside a route the server knows")
      const { endpoint } = matched.value
      const tracked = yield* FiberRef.get(currentRequest)
      const clientIp = tracked?.clientIp ?? normalizeAddress(Option.getOrElse(request.remoteAddress, () => "unknown"))
      const credential = credentialOf(request)

      if (endpoint.path === "/api/metrics" && Option.isSome(metricsToken) && credential !== "" && sameSecret(credential, metricsToken.value)) {
        yield* identified(metricsScraper)
        return metricsScraper
      }

      const principal = yield* keys.authenticate(credential).pipe(
        // The middleware's contract answers 401/403/429 only; an outage leaves it as a defect,
        // which `ErrorResponses` answers 503 SERVICE_UNAVAILABLE.
        Effect.catchTag("StoreUnavailable", (outage) => Effect.die(outage)),
        Effect.catchAll((refusal) =>
          Effect.gen(function*() {
            const verdict = yield* rateLimit(`ip:${clientIp}`, settings.rateLimitPerMinute)
            yield* announce(verdict)
            return yield* Option.isSome(verdict) && !verdict.value.allowed ? overLimit(verdict.value.resetSeconds) : refusal
          })
        )
      )
      yield* identified(principal)

      if (principal.allowedIps !== null && !principal.allowedIps.contains(clientIp)) {
        return yield* new Forbidden({ code: "IP_NOT_ALLOWED", message: `this key may not be used from ${clientIp}` })
      }
      const verdict = yield* rateLimit(`key:${principal.keyId}`, principal.rateLimitPerMinute ?? settings.rateLimitPerMinute)
      yield* announce(verdict)
      if (Option.isSome(verdict) && !verdict.value.allowed) return yield* overLimit(verdict.value.resetSeconds)

      // An endpoint behind authentication that forgot to declare a role is for admins only.
      yield* checkRole(principal, endpoint.requiredRole ?? "admin")
      // A key for every session needs no look-up (and its request no `Sessions` provided).
      if (params.sessionId !== undefined && principal.allowedSessions !== null) {
        yield* requireSession(principal, params.sessionId).pipe(
          Effect.provideService(Sessions, sessions),
          Effect.catchTag("StoreUnavailable", (outage) => Effect.die(outage))
        )
      }
      return principal
    })

    const check = () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const known = admissions.get(request)
        if (known !== undefined) return known
        return Effect.flatten(Effect.tap(Effect.exit(admit), (exit) => Effect.sync(() => admissions.set(request, exit))))
      })
    return Authentication.of({ apiKey: check, bearer: check })
  })
)
