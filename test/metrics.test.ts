import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option, Redacted, type Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { WebhookSettings } from "../src/domain/Settings.js"
import { SessionStatus } from "../src/domain/Session.js"
import { eventually, readySession, startGateway, TEST_KEY, type TestGateway } from "./support/gateway.js"

/** GET /api/metrics over real HTTP on loopback: what a Prometheus server scraping the gateway reads. */

// ---------------------------------------------------------------------------------------------
// The text exposition format, read back

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const unescapeLabel = (value: string) => value.replace(/\\(["\\n])/g, (_, char: string) => (char === "n" ? "\n" : char))

/** Every sample line of the exposition text (`name{label="value",…} number`); throws on a line it cannot read. */
const parseExposition = (text: string): Array<Sample> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not an exposition line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[name!] = unescapeLabel(value!)
    return { name: match[1]!, labels, value: Number(match[3]) }
  })

/** The value of the sample with this name and (at least) these labels; undefined when there is none. */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
  samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value

const scrape = (gateway: TestGateway) =>
  Effect.promise(async () => {
    const response = await gateway.call("GET", "/api/metrics")
    if (response.status !== 200) throw new Error(`metrics answered ${response.status}: ${JSON.stringify(response.body)}`)
    return parseExposition(response.body as string)
  })

/** Scrapes until `accept` holds for the samples (counters move as the gateway works, not at once). */
const scrapeUntil = (gateway: TestGateway, accept: (samples: ReadonlyArray<Sample>) => boolean) =>
  Effect.promise(() =>
    eventually(() => gateway.call("GET", "/api/metrics").then((response) => parseExposition(response.body as string)), accept)
  )

const call = (gateway: TestGateway, method: string, route: string, body?: unknown) =>
  Effect.promise(() => gateway.call(method, route, body === undefined ? {} : { body }))

// ---------------------------------------------------------------------------------------------
// A webhook receiver on loopback

const startReceiver = (status: number): Effect.Effect<{ readonly url: string }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<http.Server>((resume) => {
      const server = http.createServer((request, response) => {
        request.resume().on("end", () => response.writeHead(status).end())
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
  ).pipe(Effect.map((server) => ({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` })))

const loopbackWebhooks: WebhookSettings = {
  timeout: Duration.seconds(2),
  allowPrivate: true,
  concurrency: 8,
  perWebhookConcurrency: 2,
  perWebhookConcurrencyMax: 2,
  eventRetention: Duration.hours(1)
}

// ---------------------------------------------------------------------------------------------

describe("GET /api/metrics", () => {
  it.scopedLive("answers in the Prometheus text format with the process metrics, and only to a caller with a key", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      const response = yield* call(gateway, "GET", "/api/metrics")
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
      const samples = parseExposition(response.body)
      // prom-client counts CPU from its first collection on, so a first scrape may read 0.
      expect(valueOf(samples, "process_cpu_user_seconds_total")).toBeGreaterThanOrEqual(0)
      expect(valueOf(samples, "process_resident_memory_bytes")).toBeGreaterThan(0)
      expect(valueOf(samples, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0)
      expect(response.body).toContain("# TYPE switchboard_http_request_duration_seconds histogram")

      const anonymous = yield* Effect.promise(() => gateway.call("GET", "/api/metrics", { key: null }))
      expect(anonymous.status).toBe(401)
    }))

  it.scopedLive("counts sessions by status, every status present even at 0", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      yield* call(gateway, "POST", "/api/sessions", { name: "idle" })
      yield* Effect.promise(() => readySession(gateway, "busy"))

      const samples = yield* scrape(gateway)
      const byStatus = Object.fromEntries(SessionStatus.literals.map((status) => [status, valueOf(samples, "switchboard_sessions", { status })]))
      expect(byStatus).toEqual({
        created: 1,
        initializing: 0,
        qr_ready: 0,
        authenticating: 0,
        ready: 1,
        disconnected: 0,
        stopped: 0,
        logged_out: 0,
        failed: 0
      })
    }))

  it.scopedLive("counts the messages one session sends to another: out on one side, in on the other", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      const alice = yield* Effect.promise(() => readySession(gateway, "alice"))
      const bob = yield* Effect.promise(() => readySession(gateway, "bob"))
      const before = yield* scrape(gateway)
      expect(valueOf(before, "switchboard_messages_total", { direction: "out", status: "sent" })).toBe(0)
      expect(valueOf(before, "switchboard_messages_total", { direction: "in", status: "received" })).toBe(0)

      const sent = yield* call(gateway, "POST", `/api/sessions/${alice.id}/messages/send-text`, { chatId: bob.phone, text: "counted" })
      expect(sent.status).toBe(201)

      const after = yield* scrapeUntil(gateway, (samples) =>
        valueOf(samples, "switchboard_messages_total", { direction: "out", status: "delivered" }) === 1 &&
        valueOf(samples, "switchboard_messages_total", { direction: "in", status: "received" }) === 1)
      expect(valueOf(after, "switchboard_messages_total", { direction: "out", status: "sent" })).toBe(1)
      expect(valueOf(after, "switchboard_messages_total", { direction: "out", status: "failed" })).toBe(0)
    }))

  it.scopedLive("counts webhook attempts by outcome, times them, and counts the deliveries that failed", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway({ webhooks: loopbackWebhooks })
      const healthy = yield* startReceiver(200)
      const broken = yield* startReceiver(500)

      // Tests go out at once, once: one success, one failure (a test is never retried).
      const good = yield* call(gateway, "POST", "/api/webhooks", { url: healthy.url, events: ["message.received"] })
      const bad = yield* call(gateway, "POST", "/api/webhooks", { url: broken.url, events: ["message.received"] })
      expect((yield* call(gateway, "POST", `/api/webhooks/${good.body.id}/test`)).body.delivered).toBe(true)
      expect((yield* call(gateway, "POST", `/api/webhooks/${bad.body.id}/test`)).body.delivered).toBe(false)

      const tested = yield* scrape(gateway)
      expect(valueOf(tested, "switchboard_webhook_attempts_total", { outcome: "success" })).toBe(1)
      expect(valueOf(tested, "switchboard_webhook_attempts_total", { outcome: "failure" })).toBe(1)
      expect(valueOf(tested, "switchboard_webhook_attempts_total", { outcome: "no_response" })).toBe(0)
      expect(valueOf(tested, "switchboard_webhook_attempt_duration_seconds_count", { outcome: "success" })).toBe(1)
      expect(valueOf(tested, "switchboard_webhook_attempt_duration_seconds_count", { outcome: "failure" })).toBe(1)
      expect(valueOf(tested, "switchboard_webhook_attempt_duration_seconds_bucket", { outcome: "success", le: "+Inf" })).toBe(1)
      expect(valueOf(tested, "switchboard_webhook_deliveries_failed_total", { reason: "test" })).toBe(1)

      // A scheduled delivery allowed one attempt fails for good on its first 500.
      yield* call(gateway, "POST", "/api/webhooks", { url: broken.url, events: ["session.status"], maxAttempts: 1 })
      yield* Effect.promise(() => readySession(gateway, "noisy"))
      const exhausted = yield* scrapeUntil(gateway, (samples) =>
        (valueOf(samples, "switchboard_webhook_deliveries_failed_total", { reason: "attempts_exhausted" }) ?? 0) >= 1)
      const failedAttempts = valueOf(exhausted, "switchboard_webhook_attempts_total", { outcome: "failure" })!
      expect(failedAttempts).toBeGreaterThanOrEqual(2)
      expect(valueOf(exhausted, "switchboard_webhook_attempt_duration_seconds_count", { outcome: "failure" })).toBe(failedAttempts)
    }))

  it.scopedLive("labels HTTP requests with the route pattern, never the raw path", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      const created = yield* call(gateway, "POST", "/api/sessions", { name: "labelled" })
      const sessionId = created.body.id as string
      expect((yield* call(gateway, "GET", `/api/sessions/${sessionId}`)).status).toBe(200)
      expect((yield* call(gateway, "GET", "/api/sessions/no-such-session-42")).status).toBe(404)
      expect((yield* call(gateway, "GET", "/api/no/such/endpoint")).status).toBe(404)

      const samples = yield* scrape(gateway)
      const route = "/api/sessions/:sessionId"
      expect(valueOf(samples, "switchboard_http_requests_total", { method: "GET", route, status: "200" })).toBe(1)
      expect(valueOf(samples, "switchboard_http_requests_total", { method: "GET", route, status: "404" })).toBe(1)
      expect(valueOf(samples, "switchboard_http_requests_total", { method: "POST", route: "/api/sessions", status: "201" })).toBe(1)
      expect(valueOf(samples, "switchboard_http_requests_total", { method: "GET", route: "unmatched", status: "404" })).toBe(1)
      expect(valueOf(samples, "switchboard_http_request_duration_seconds_count", { method: "GET", route })).toBe(2)

      const routes = samples.filter((sample) => sample.name.startsWith("switchboard_http_")).map((sample) => sample.labels.route!)
      expect(routes.every((label) => label === "unmatched" || label.startsWith("/api/"))).toBe(true)
      expect(routes.some((label) => label.includes(sessionId) || label.includes("no-such-session-42") || label.includes("no/such"))).toBe(false)
    }))

  it.scopedLive("labels a request with the endpoint that answered it where a static segment and a parameter compete", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      const sessionId = (yield* call(gateway, "POST", "/api/sessions", { name: "siblings" })).body.id as string
      // `batch/media` fits both messages/batch/:batchId and messages/:messageId/media; the router
      // takes the static `batch`, and the label must name the endpoint that actually answered.
      expect((yield* call(gateway, "GET", `/api/sessions/${sessionId}/messages/batch/media`)).body.code).toBe("BATCH_NOT_FOUND")
      expect((yield* call(gateway, "GET", `/api/sessions/${sessionId}/messages/batch-of-none/media`)).body.code).toBe("MESSAGE_NOT_FOUND")

      const samples = yield* scrape(gateway)
      const requests = (route: string) => valueOf(samples, "switchboard_http_requests_total", { method: "GET", route, status: "404" })
      expect(requests("/api/sessions/:sessionId/messages/batch/:batchId")).toBe(1)
      expect(requests("/api/sessions/:sessionId/messages/:messageId/media")).toBe(1)
    }))

  it.scopedLive("shows the mailbox depth of each running session, and drops a stopped one", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      const running = yield* Effect.promise(() => readySession(gateway, "running"))
      const depth = (samples: ReadonlyArray<Sample>) => valueOf(samples, "switchboard_session_mailbox_depth", { session_id: running.id })
      expect(depth(yield* scrape(gateway))).toBe(0)

      yield* call(gateway, "POST", `/api/sessions/${running.id}/stop`)
      yield* scrapeUntil(gateway, (samples) => depth(samples) === undefined)
    }))
})

// ---------------------------------------------------------------------------------------------
// Who may scrape

describe("who may read the metrics", () => {
  it.scoped("an admin key or the METRICS_TOKEN bearer; the token opens nothing else, and other roles are refused", () =>
    Effect.gen(function*() {
      const token = "metrics-scraper-token-0123456789"
      const gateway = yield* startGateway({
        security: { allowedCidrs: [], trustedProxies: [], metricsToken: Option.some(Redacted.make(token)), auditRetention: Duration.days(90) }
      })
      const call = (path: string, key: string | null, headers: Record<string, string> = {}) =>
        Effect.promise(() => gateway.call("GET", path, { key, headers }))
      const bearer = { authorization: `Bearer ${token}` }
      expect((yield* call("/api/metrics", null, bearer)).status).toBe(200)
      expect((yield* call("/api/metrics", token)).status).toBe(200)
      expect((yield* call("/api/metrics", null)).status).toBe(401)
      expect((yield* call("/api/metrics", null, { authorization: "Bearer wrong-token" })).status).toBe(401)
      expect((yield* call("/api/sessions", null, bearer)).status).toBe(401)
      const viewer = yield* Effect.promise(() => gateway.call("POST", "/api/auth/api-keys", { body: { name: "viewer", role: "viewer" } }))
      const refused = yield* call("/api/metrics", viewer.body.key)
      expect([refused.status, refused.body.code]).toEqual([403, "FORBIDDEN"])
      expect((yield* call("/api/metrics", TEST_KEY)).status).toBe(200)
    }))
})
