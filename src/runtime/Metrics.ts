import type { StoreUnavailable } from "../domain/Errors.js"
import { Context, Effect, Layer } from "effect"
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"
import { SessionRepo } from "./ports/store/SessionRepo.js"
import { SessionSupervisor } from "./SessionSupervisor.js"
import { Events } from "./Events.js"
import { type DomainEvent } from "../domain/Events.js"
import { SessionStatus } from "../domain/Session.js"

/** One answered API request, as the request metrics count it. */
export interface HttpRequestSample {
  readonly method: string
  /** The endpoint's path pattern (`/api/sessions/:sessionId`), never the raw path, or `unmatched`. */
  readonly route: string
  readonly status: number
  readonly seconds: number
}

/** One attempt at a webhook delivery: answered 2xx, answered otherwise, or not answered at all. */
export interface WebhookAttemptSample {
  readonly delivered: boolean
  readonly statusCode: number | null
  readonly durationMs: number
}

/**
 * Why a webhook delivery ended failed: its attempts ran out, the receiver answered 410 Gone, it
 * was a test (never retried), or it was given up without an attempt (webhook removed or
 * disabled, event no longer kept).
 */
export type WebhookFailureReason = "attempts_exhausted" | "gone" | "test" | "abandoned"

export interface MetricsService {
  /** Every metric in the Prometheus text format; the session gauges are read now. */
  readonly scrape: Effect.Effect<string, StoreUnavailable>
  readonly recordHttpRequest: (sample: HttpRequestSample) => Effect.Effect<void>
  /** Plain calls: the webhook dispatcher records from its attempts' callbacks, thousands a second. */
  readonly recordWebhookAttempt: (sample: WebhookAttemptSample) => void
  readonly recordWebhookFailure: (reason: WebhookFailureReason) => void
}

/**
 * The process metrics (`process_*`, `nodejs_*`, unprefixed as dashboards expect) describe the
 * process, not a gateway: one set, made on first use and shared by every gateway in it.
 * Collecting them per gateway would start a GC observer and an event-loop monitor each time,
 * which prom-client never stops.
 */
let processRegistry: Registry | undefined
const processMetrics = () => {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

const WEBHOOK_OUTCOMES = ["success", "failure", "no_response"] as const
const WEBHOOK_FAILURE_REASONS: ReadonlyArray<WebhookFailureReason> = ["attempts_exhausted", "gone", "test", "abandoned"]
const MESSAGE_COUNTS = [
  { direction: "out", status: "sent" },
  { direction: "out", status: "delivered" },
  { direction: "out", status: "read" },
  { direction: "out", status: "played" },
  { direction: "out", status: "failed" },
  { direction: "in", status: "received" }
] as const
type MessageCount = (typeof MESSAGE_COUNTS)[number]

/**
 * The count a domain event adds to, if any. `message.sent` and `message.failed` are published
 * with the same change as a `message.ack` to `sent` or `failed`, so the ack counts only for the
 * later statuses.
 */
const messageCountOf = (event: DomainEvent): MessageCount | undefined => {
  switch (event.event) {
    case "message.received":
      return { direction: "in", status: "received" }
    case "message.sent":
      return { direction: "out", status: "sent" }
    case "message.failed":
      return { direction: "out", status: "failed" }
    case "message.ack": {
      const { status } = event.data as { readonly status?: unknown }
      return status === "delivered" || status === "read" || status === "played" ? { direction: "out", status } : undefined
    }
    default:
      return undefined
  }
}

const make = Effect.gen(function*() {
  const sessionRepo = yield* SessionRepo
  const supervisor = yield* SessionSupervisor
  const events = yield* Events
  const registry = new Registry()

  const sessions = new Gauge({
    name: "switchboard_sessions",
    help: "Sessions by status, as stored.",
    labelNames: ["status"],
    registers: [registry]
  })
  const mailboxDepth = new Gauge({
    name: "switchboard_session_mailbox_depth",
    help: "Commands waiting in a running session's mailbox.",
    labelNames: ["session_id"],
    registers: [registry]
  })
  const messages = new Counter({
    name: "switchboard_messages_total",
    help: "Messages that reached a status since the gateway started: out (sent, delivered, read, played, failed) and in (received).",
    labelNames: ["direction", "status"],
    registers: [registry]
  })
  const webhookAttempts = new Counter({
    name: "switchboard_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome: success (2xx), failure (another status), no_response (refused address, network error, timeout).",
    labelNames: ["outcome"],
    registers: [registry]
  })
  const webhookAttemptDuration = new Histogram({
    name: "switchboard_webhook_attempt_duration_seconds",
    help: "How long webhook delivery attempts took, by outcome.",
    labelNames: ["outcome"],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry]
  })
  const webhookFailures = new Counter({
    name: "switchboard_webhook_deliveries_failed_total",
    help: "Webhook deliveries that ended failed, by reason: attempts_exhausted, gone (410), test, abandoned (no attempt).",
    labelNames: ["reason"],
    registers: [registry]
  })
  const httpRequests = new Counter({
    name: "switchboard_http_requests_total",
    help: "API requests answered, by method, route pattern and status.",
    labelNames: ["method", "route", "status"],
    registers: [registry]
  })
  const httpDuration = new Histogram({
    name: "switchboard_http_request_duration_seconds",
    help: "How long API requests took to answer (until the response started), by method and route pattern.",
    labelNames: ["method", "route"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry]
  })

  // Known label values start at 0, so a series exists (and rate() works) before its first event.
  for (const count of MESSAGE_COUNTS) messages.inc(count, 0)
  for (const outcome of WEBHOOK_OUTCOMES) {
    webhookAttempts.inc({ outcome }, 0)
    webhookAttemptDuration.zero({ outcome })
  }
  for (const reason of WEBHOOK_FAILURE_REASONS) webhookFailures.inc({ reason }, 0)

  // Messages are counted from the events bus as they happen, not by aggregating the messages
  // table at scrape time: that table grows without bound and a GROUP BY over it every scrape
  // is a full scan, while an event costs one increment. Counters start at 0 with the process,
  // as Prometheus expects (rate() and increase() handle the reset).
  yield* events.observeLocal((event) => {
    const count = messageCountOf(event)
    if (count !== undefined) messages.inc(count)
  })


  const readScrapeTimeGauges = Effect.gen(function*() {
    const counts = yield* sessionRepo.countByStatus()
    const depths = yield* supervisor.mailboxDepths
    // Set in one synchronous step, so a concurrent scrape never sees them half written.
    for (const status of SessionStatus.literals) sessions.set({ status }, counts.get(status) ?? 0)
    mailboxDepth.reset()
    for (const [sessionId, depth] of depths) mailboxDepth.set({ session_id: sessionId }, depth)
  })

  const outcomeOf = (sample: WebhookAttemptSample) =>
    sample.delivered ? "success" : sample.statusCode === null ? "no_response" : "failure"

  return Metrics.of({
    scrape: Effect.zipRight(
      readScrapeTimeGauges,
      Effect.promise(() => Registry.merge([processMetrics(), registry]).metrics())
    ).pipe(Effect.withSpan("Metrics.scrape")),
    recordHttpRequest: ({ method, route, seconds, status }) =>
      Effect.sync(() => {
        httpRequests.inc({ method, route, status })
        httpDuration.observe({ method, route }, seconds)
      }),
    recordWebhookAttempt: (sample) => {
      const outcome = outcomeOf(sample)
      webhookAttempts.inc({ outcome })
      webhookAttemptDuration.observe({ outcome }, sample.durationMs / 1000)
    },
    recordWebhookFailure: (reason) => webhookFailures.inc({ reason })
  })
})

/**
 * The gateway's Prometheus metrics, in a registry of its own (never prom-client's global one:
 * an embedder, or a test, may run several gateways in one process), plus the process metrics.
 */
export class Metrics extends Context.Tag("switchboard/Metrics")<Metrics, MetricsService>() {
  static readonly layer = Layer.scoped(Metrics, make)
}
