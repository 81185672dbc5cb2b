import { Clock, Duration, Effect, Either } from "effect"
import type { Agent } from "undici"
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

/** The webhook's headers first (names lower-cased), then the gateway's, which win. */
const headersOf = (url: URL, target: DeliveryTarget, event: DomainEvent, attempt: number, timestampSeconds: number, body: string) => {
  const headers: Record<string, string> = {}
  const basic = basicCredentialsOf(url)
  if (basic !== undefined) headers["authorization"] = basic
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value
  return Object.assign(headers, {
    "content-type": "application/json",
    "user-agent": `Switchboard/${VERSION}`,
    "webhook-id": event.id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatureHeader(target.secret, event.id, timestampSeconds, body),
    "x-webhook-event": event.event,
    "x-webhook-attempt": String(attempt)
  })
}

/** Why the request failed, in words safe to store: a refused address, or the code of the error or one of its causes. */
const requestFailure = (url: URL, error: unknown): string => {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof AddressNotAllowed) return `${url.hostname} resolves to ${NOT_ALLOWED}`
    const code = (cause as { code?: unknown }).code
    if (typeof code === "string" && /^[A-Z0-9_]+$/.test(code)) return `the request failed (${code})`
  }
  return "the request failed"
}

/** Sends and reads the answer; fails with the reason to record, succeeds with the status. */
const exchange = (target: DeliveryTarget, event: DomainEvent, attempt: number, startedAt: number, settings: AttemptSettings) =>
  Effect.gen(function*() {
    const url = yield* Either.mapLeft(parseMediaUrl(target.url), () => "the webhook URL is not a valid http(s) URL")
    const literal = ipLiteralOf(url)
    if (literal !== undefined && !settings.isAllowed(literal)) return yield* Effect.fail(`${url.hostname} is ${NOT_ALLOWED}`)
    const body = envelopeOf(event)
    const headers = headersOf(url, target, event, attempt, Math.floor(startedAt / 1000), body)
    // The agent's own request rather than `fetch`: no WHATWG Request, Response and streams to
    // build for every attempt. It follows no redirect: a redirect is an answer like any other
    // non-2xx, and following it could lead anywhere. The credentials of the URL are in `headers`.
    const response = yield* Effect.tryPromise({
      try: (signal) => settings.agent.request({ origin: url.origin, path: `${url.pathname}${url.search}`, method: "POST", body, headers, signal }),
      catch: (error) => requestFailure(url, error)
    })
    // Read within the timeout, capped, so that the connection can be used again; a broken or
    // long body does not change the answer's status.
    yield* Effect.ignore(Effect.tryPromise(() => response.body.dump({ limit: MAX_RESPONSE_BYTES })))
    return response.statusCode
  })

/**
 * One attempt at delivering an event: a signed POST per the Standard Webhooks spec. Any 2xx is
 * delivered; anything else (another status, a refused address, a network error, the timeout)
 * is an error, described for the attempt log. Never fails.
 */
export const deliverOnce = (
  target: DeliveryTarget,
  event: DomainEvent,
  attempt: number,
  settings: AttemptSettings
): Effect.Effect<AttemptResult> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const outcome = yield* exchange(target, event, attempt, startedAt, settings).pipe(
      Effect.timeoutFail({ duration: settings.timeout, onTimeout: () => `no answer within ${Duration.toMillis(settings.timeout)} ms` }),
      Effect.either
    )
    const durationMs = (yield* Clock.currentTimeMillis) - startedAt
    const statusCode = Either.getOrNull(outcome)
    const error = Either.match(outcome, {
      onLeft: (reason) => reason,
      onRight: (status) => (status >= 200 && status <= 299 ? null : `the receiver answered ${status}`)
    })
    return { delivered: error === null, statusCode, error, at: new Date(startedAt).toISOString(), durationMs }
  })
