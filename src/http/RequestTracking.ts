import { Headers, type HttpServerRequest } from "@effect/platform"
import { FiberRef, Option } from "effect"
import { isIP } from "node:net"
import type { Principal } from "../domain/Principal.js"
import type { MatchedEndpoint } from "./Endpoints.js"
import { uuidv7 } from "../domain/uuidv7.js"
import { type NetworkList, normalizeAddress } from "../domain/cidr.js"

/** What is known of a request before it is routed; set once by `requestEdge`, never changed. */
export interface TrackedRequest {
  readonly requestId: string
  /** The caller's address: the socket peer, or `X-Forwarded-For` when that peer is a trusted proxy. */
  readonly clientIp: string
  readonly pathname: string
  readonly startedAt: number
}

/** A request once answered: what the access log, the metrics and the audit log record of it. */
export interface AnsweredRequest {
  readonly method: string
  readonly tracked: TrackedRequest
  readonly status: number
  /** The endpoint the router matched (or the lookup of a refusal found); none for a path no route takes. */
  readonly matched: Option.Option<MatchedEndpoint>
  /** Whose key the request carried, once authentication read it. */
  readonly caller: Option.Option<Principal>
  /** When the answer was ready, in epoch millis. */
  readonly now: number
}

/**
 * The request being answered, set by the request edge on the request's own fiber (each request
 * runs in one of its own, as `authenticatedCaller` below relies on too). A fiber reference set
 * once rather than a service provided around the app: providing copies the whole context and
 * wraps the request in one more acquire/release (~10 Effect operations), on every request.
 */
export const currentRequest: FiberRef.FiberRef<TrackedRequest | undefined> = FiberRef.unsafeMake<TrackedRequest | undefined>(undefined)

/**
 * Whose key the request carried, once authentication has read it (even when it then refused
 * the key its address, rate or role). Read after the answer by the audit log and the access log,
 * which wrap the router and so cannot see the `CurrentPrincipal` it provides to the handler.
 */
export const authenticatedCaller: FiberRef.FiberRef<Option.Option<Principal>> = FiberRef.unsafeMake(Option.none())

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

/** What is known of a request before it is routed (see `requestEdge`), `now` its arrival. */
export const trackedRequestOf = (request: HttpServerRequest.HttpServerRequest, trustedProxies: NetworkList, now: number): TrackedRequest => ({
  requestId: requestIdOf(request),
  clientIp: clientAddress(
    Option.getOrElse(request.remoteAddress, () => "unknown"),
    Option.getOrUndefined(Headers.get(request.headers, "x-forwarded-for")),
    trustedProxies
  ),
  pathname: new URL(request.url, "http://gateway").pathname,
  startedAt: now
})
