import { Headers, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import { isIP } from "node:net"
import type { Principal } from "../services/ApiKeys.js"
import { uuidv7 } from "../domain/uuidv7.js"
import { type NetworkList, normalizeAddress } from "../domain/cidr.js"
import { matchRoute, type RouteInfo } from "./routes.js"

/** What a request's rate limit said, for the `RateLimit-*` headers of its answer. */
export interface RateLimitVerdict {
  readonly limit: number
  readonly remaining: number
  readonly resetSeconds: number
  readonly allowed: boolean
}

/**
 * One request as the gateway's own layers see it. Created by `trackRequests` around the whole
 * API; the authentication step fills in who called and what the rate limit said, so that
 * the audit log, the metrics and the access log read one record.
 */
export interface RequestInfo {
  readonly requestId: string
  /** The caller's address: the socket peer, or `X-Forwarded-For` when that peer is a trusted proxy. */
  readonly clientIp: string
  readonly method: string
  readonly pathname: string
  /** The endpoint matched, if any, with its path parameters. */
  readonly route: RouteInfo | undefined
  readonly params: Readonly<Record<string, string>>
  readonly startedAt: number
  principal: Principal | undefined
  rateLimit: RateLimitVerdict | undefined
}

export class CurrentRequest extends Context.Tag("switchboard/CurrentRequest")<CurrentRequest, RequestInfo>() {}

/**
 * The caller's address. `X-Forwarded-For` is read right to left and believed only while the
 * hop that reported it is a trusted proxy, so a client cannot forge its way in.
 */
export const clientAddress = (remote: string, forwardedFor: string | undefined, trustedProxies: NetworkList) => {
  let address = normalizeAddress(remote)
  if (forwardedFor === undefined || trustedProxies.entries.length === 0) return address
  const hops = forwardedFor.split(",").map((hop) => hop.trim()).filter((hop) => hop.length > 0)
  for (let index = hops.length - 1; index >= 0 && trustedProxies.contains(address); index--) {
    address = normalizeAddress(hops[index]!)
    if (isIP(address) === 0) return "invalid"
  }
  return address
}

/** A request id the caller sent (`X-Request-Id`) is kept when it is short and plain; otherwise one is made. */
const requestIdOf = (request: HttpServerRequest.HttpServerRequest) =>
  Option.getOrElse(
    Option.filter(Headers.get(request.headers, "x-request-id"), (id) => /^[\w.:-]{1,128}$/.test(id)),
    uuidv7
  )

export const rateLimitHeaders = (verdict: RateLimitVerdict | undefined): Record<string, string> => {
  if (verdict === undefined) return {}
  const headers: Record<string, string> = {
    "ratelimit-limit": String(verdict.limit),
    "ratelimit-remaining": String(verdict.remaining),
    "ratelimit-reset": String(verdict.resetSeconds)
  }
  if (!verdict.allowed) headers["retry-after"] = String(verdict.resetSeconds)
  return headers
}

/**
 * The outermost layer of the API: gives the request its id and its `RequestInfo`, tags every
 * log line written while answering it with the id, and returns the id (`X-Request-Id`) and the
 * rate limit headers with the answer.
 */
export const trackRequests = (trustedProxies: NetworkList) =>
<E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, Exclude<R, CurrentRequest>> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const pathname = new URL(request.url, "http://gateway").pathname
    const matched = matchRoute(request.method, request.url)
    const info: RequestInfo = {
      requestId: requestIdOf(request),
      clientIp: clientAddress(
        Option.getOrElse(request.remoteAddress, () => "unknown"),
        Option.getOrUndefined(Headers.get(request.headers, "x-forwarded-for")),
        trustedProxies
      ),
      method: request.method,
      pathname,
      route: matched?.route,
      params: matched?.params ?? {},
      startedAt: Date.now(),
      principal: undefined,
      rateLimit: undefined
    }
    const withHeaders = (response: HttpServerResponse.HttpServerResponse) =>
      HttpServerResponse.setHeaders(response, { "x-request-id": info.requestId, ...rateLimitHeaders(info.rateLimit) })
    // The server writes the router's answer before `app` returns, so the headers go on in a
    // pre-response handler; an answer made by a wrapper inside comes back here unwritten.
    const response = yield* app.pipe(
      HttpApp.withPreResponseHandler((_request, response) => Effect.succeed(withHeaders(response))),
      Effect.provideService(CurrentRequest, info),
      Effect.annotateLogs({ requestId: info.requestId })
    )
    return withHeaders(response)
  })
