import { Headers, HttpApiMiddleware, HttpApiSecurity, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect, Exit, Layer, Option, Redacted, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import { AppSettings } from "../domain/Settings.js"
import { SessionRepo } from "../layers/store/SessionRepo.js"
import { ApiKeys, CurrentPrincipal, hashApiKey, type Principal } from "../services/ApiKeys.js"
import { Forbidden, RateLimited, Unauthorized } from "../domain/Errors.js"
import { wireError } from "./wireError.js"
import { normalizeAddress } from "../domain/cidr.js"
import { checkRole, requireSession } from "./AccessPolicy.js"
import { makeRateLimiter } from "./RateLimiting.js"
import { CurrentRequest } from "./RequestInfo.js"

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(wireError(Unauthorized), wireError(Forbidden), wireError(RateLimited)),
  provides: CurrentPrincipal,
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" }),
    bearer: HttpApiSecurity.bearer
  }
}) {}

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
 * address), its role (403) and its sessions (403). The outcome is written into the request's
 * `RequestInfo` for the audit log and the rate limit headers.
 */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const settings = yield* AppSettings
    const sessions = yield* SessionRepo
    const rateLimit = yield* makeRateLimiter
    const metricsToken = Option.map(settings.security.metricsToken, Redacted.value)
    // HttpApi tries the two schemes in turn; both stand for the same check, made once a request.
    const admissions = new WeakMap<object, Admission>()

    const overLimit = (resetSeconds: number) =>
      new RateLimited({ code: "RATE_LIMITED", message: `too many requests; try again in ${resetSeconds} s` })

    const admit: Effect.Effect<Principal, Unauthorized | Forbidden | RateLimited, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext> = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { params, route } = yield* HttpRouter.RouteContext
      const info = Option.getOrUndefined(yield* Effect.serviceOption(CurrentRequest))
      const clientIp = info?.clientIp ?? normalizeAddress(Option.getOrElse(request.remoteAddress, () => "unknown"))
      const credential = credentialOf(request)
      const path = String(route.path)

      if (path === "/api/metrics" && Option.isSome(metricsToken) && credential !== "" && sameSecret(credential, metricsToken.value)) {
        if (info !== undefined) info.principal = metricsScraper
        return metricsScraper
      }

      const principal = yield* keys.authenticate(credential).pipe(
        // The middleware's contract answers 401/403/429 only; an outage leaves it as a defect,
        // which `ErrorResponses` answers 503 SERVICE_UNAVAILABLE.
        Effect.catchTag("StoreUnavailable", (outage) => Effect.die(outage)),
        Effect.catchAll((refusal) =>
          Effect.flatMap(rateLimit(`ip:${clientIp}`, settings.rateLimitPerMinute), (verdict): Effect.Effect<never, Unauthorized | RateLimited> => {
            if (info !== undefined) info.rateLimit = Option.getOrUndefined(verdict)
            return Option.isSome(verdict) && !verdict.value.allowed ? Effect.fail(overLimit(verdict.value.resetSeconds)) : Effect.fail(refusal)
          })
        )
      )
      if (info !== undefined) info.principal = principal

      if (principal.allowedIps !== null && !principal.allowedIps.contains(clientIp)) {
        return yield* new Forbidden({ code: "IP_NOT_ALLOWED", message: `this key may not be used from ${clientIp}` })
      }
      const verdict = yield* rateLimit(`key:${principal.keyId}`, principal.rateLimitPerMinute ?? settings.rateLimitPerMinute)
      if (info !== undefined) info.rateLimit = Option.getOrUndefined(verdict)
      if (Option.isSome(verdict) && !verdict.value.allowed) return yield* overLimit(verdict.value.resetSeconds)

      yield* checkRole(principal, route.method, path)
      if (params.sessionId !== undefined) {
        yield* requireSession(principal, params.sessionId).pipe(
          Effect.provideService(SessionRepo, sessions),
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
