import { Duration } from "effect"
import type { Agent, Dispatcher } from "undici"
import type { DomainEvent } from "../../domain/Events.js"
import { VERSION } from "../../domain/Health.js"
import type { AddressPolicy } from "../network/addressPolicy.js"
import { AddressNotAllowed } from "../network/guardedAgent.js"
import { basicCredentialsOf, ipLiteralOf, parseMediaUrl } from "../network/mediaUrl.js"
import { signatureHeader } from "./signature.js"

/** Where an attempt goes, and with what. */
export interface DeliveryTarget {
  readonly url: string
  readonly secret: string
  /** The webhook's own headers; they cannot replace the gateway's. */
  readonly headers: Readonly<Record<string, string>>
}

export interface AttemptSettings {
  /** For the whole attempt: lookup, connection, request, and reading the answer. */
  readonly timeout: Duration.Duration
  /** Connections go through it; its lookup enforces the address policy for host names. */
  readonly agent: Agent
  /** Checked here for IP-literal hosts, which are never looked up. */
  readonly isAllowed: AddressPolicy
}

/** What one attempt came to. `error` says why it is not delivered; it never holds the secret or the URL. */
export interface AttemptResult {
  readonly delivered: boolean
  /** The receiver's status, when it answered. */
  readonly statusCode: number | null
  readonly error: string | null
  /** When the attempt started (ISO). */
  readonly at: string
  readonly durationMs: number
}

/** The receiver's answer is read only this far: enough to keep the connection reusable, no more. */
const MAX_RESPONSE_BYTES = 4 * 1024

const NOT_ALLOWED = "a loopback, private or reserved address (WEBHOOK_ALLOW_PRIVATE=false)"

/** The body every attempt of a delivery sends: the stored event, as `{id, event, sessionId, timestamp, data}`. */
export const envelopeOf = (event: DomainEvent): string =>
  JSON.stringify({ id: event.id, event: event.event, sessionId: event.sessionId, timestamp: event.timestamp, data: event.data })

/** A webhook's URL and headers as every attempt to it needs them; or why nothing can be sent to it. */
interface Endpoint {
  readonly hostname: string
  readonly origin: string
  readonly path: string
  /** The webhook's headers (names lower-cased) and the URL's credentials, before the gateway's own. */
  readonly headers: Readonly<Record<string, string>>
}

/**
 * Endpoints by target: a webhook's kept row is the same object from one attempt to the next, so
 * its URL is parsed and checked once while the copy is kept, and again when it is read afresh.
 */
const endpoints = new WeakMap<DeliveryTarget, Endpoint | string>()

const endpointOf = (target: DeliveryTarget, isAllowed: AddressPolicy): Endpoint | string => {
  const known = endpoints.get(target)
  if (known !== undefined) return known
  const parsed = parseMediaUrl(target.url)
  let endpoint: Endpoint | string
  if (parsed._tag === "Left") endpoint = "the webhook URL is not a valid http(s) URL"
  else {
    const url = parsed.right
    const literal = ipLiteralOf(url)
    const headers: Record<string, string> = {}
    const basic = basicCredentialsOf(url)
    if (basic !== undefined) headers["authorization"] = basic
    for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value
    endpoint = literal !== undefined && !isAllowed(literal)
      ? `${url.hostname} is ${NOT_ALLOWED}`
      : { hostname: url.hostname, origin: url.origin, path: `${url.pathname}${url.search}`, headers }
  }
  endpoints.set(target, endpoint)
  return endpoint
}

/** The webhook's headers first, then the gateway's, which win. */
const headersOf = (endpoint: Endpoint, target: DeliveryTarget, event: DomainEvent, attempt: number, timestampSeconds: number, body: string) => ({
  ...endpoint.headers,
  "content-type": "application/json",
  "user-agent": `Switchboard/${VERSION}`,
  "webhook-id": event.id,
  "webhook-timestamp": String(timestampSeconds),
  "webhook-signature": signatureHeader(target.secret, event.id, timestampSeconds, body),
  "x-webhook-event": event.event,
  "x-webhook-attempt": String(attempt)
})

/** Why the request failed, in words safe to store: a refused address, or the code of the error or one of its causes. */
const requestFailure = (hostname: string, error: unknown): string => {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof AddressNotAllowed) return `${hostname} resolves to ${NOT_ALLOWED}`
    const code = (cause as { code?: unknown }).code
    if (typeof code === "string" && /^[A-Z0-9_]+$/.test(code)) return `the request failed (${code})`
  }
  return "the request failed"
}

class AttemptTimedOut extends Error {}

/**
 * One attempt at delivering an event: a signed POST per the Standard Webhooks spec. Any 2xx is
 * delivered; anything else (another status, a refused address, a network error, the timeout)
 * is an error, described for the attempt log. Never rejects.
 *
 * Plain callbacks rather than effects: an attempt is the dispatcher's innermost step, and a
 * fiber, a forked timeout and a response stream per attempt cost more than the request itself.
 * It goes through the agent's `dispatch` (no redirect is followed: a redirect is an answer like
 * any other non-2xx, and following it could lead anywhere); the answer's body is read only to
 * keep the connection reusable, up to `MAX_RESPONSE_BYTES`, and a broken or long body does not
 * change the status. The timeout is a plain timer: Node keeps the timers of one duration in one
 * list, under one system timer.
 */
export const deliverOnce = (target: DeliveryTarget, event: DomainEvent, attempt: number, settings: AttemptSettings): Promise<AttemptResult> =>
  new Promise((resolve) => {
    const startedAt = Date.now()
    let settled = false
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ delivered: error === null, statusCode, error, at: new Date(startedAt).toISOString(), durationMs: Date.now() - startedAt })
    }
    const answered = (status: number) => finish(status, status >= 200 && status <= 299 ? null : `the receiver answered ${status}`)

    const timeoutMs = Duration.toMillis(settings.timeout)
    let abort: ((reason: Error) => void) | undefined
    const timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
      finish(null, `no answer within ${timeoutMs} ms`)
      abort?.(new AttemptTimedOut())
    }, timeoutMs)

    const endpoint = endpointOf(target, settings.isAllowed)
    if (typeof endpoint === "string") return finish(null, endpoint)
    const body = envelopeOf(event)
    const headers = headersOf(endpoint, target, event, attempt, Math.floor(startedAt / 1000), body)
    let status: number | undefined
    let bytesRead = 0
    const handler: Dispatcher.DispatchHandlers = {
      onConnect: (abortRequest) => {
        // Timed out while connecting: the request is dropped as soon as it could be sent.
        if (settled) abortRequest(new AttemptTimedOut())
        else abort = abortRequest
      },
      onHeaders: (statusCode) => {
        status = statusCode
        return true
      },
      onData: (chunk) => {
        bytesRead += chunk.length
        if (bytesRead > MAX_RESPONSE_BYTES && status !== undefined) {
          answered(status)
          abort?.(new Error("answer too long"))
        }
        return true
      },
      onComplete: () => status === undefined ? finish(null, "the request failed") : answered(status),
      onError: (error) => status === undefined ? finish(null, requestFailure(endpoint.hostname, error)) : answered(status)
    }
    settings.agent.dispatch({ origin: endpoint.origin, path: endpoint.path, method: "POST", body, headers }, handler)
  })
