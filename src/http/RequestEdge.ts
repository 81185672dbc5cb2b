import { HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Exit, FiberRef, HashMap } from "effect"
import type { NetworkList } from "../domain/cidr.js"
import type { MetricsService } from "../runtime/Metrics.js"
import type { AuditService } from "../services/Audit.js"
import type { LifecycleService } from "../services/Lifecycle.js"
import { accessLogLine } from "./AccessLog.js"
import { auditRecordOf, isAudited } from "./Auditing.js"
import { isEventStream, isHealthCheck, shuttingDown } from "./Draining.js"
import { type EndpointLookup, matchedEndpoint } from "./Endpoints.js"
import { addressRefusal } from "./NetworkAllowList.js"
import { requestSample } from "./RequestMetrics.js"
import { type AnsweredRequest, authenticatedCaller, currentRequest, type TrackedRequest, trackedRequestOf } from "./RequestTracking.js"

export interface RequestEdgeOptions {
  /** `TRUSTED_PROXIES`: whose `X-Forwarded-For` names the caller. */
  readonly trustedProxies: NetworkList
  /** `ALLOWED_CIDRS`: where callers may be (empty: anywhere). */
  readonly allowed: NetworkList
  readonly lifecycle: LifecycleService
  readonly metrics: MetricsService
  readonly audit: AuditService
}

/** An answer as it goes out: with the request's id, and closing its connection while the gateway drains. */
const finished = (response: HttpServerResponse.HttpServerResponse, tracked: TrackedRequest, draining: boolean) =>
  HttpServerResponse.setHeader(
    draining ? HttpServerResponse.setHeader(response, "connection", "close") : response,
    "x-request-id",
    tracked.requestId
  )

/**
 * The API's edge, in one pass around the router (it was six middlewares, each wrapping the next:
 * ~0.3 ms of CPU a request, more than a send's own work; issue 19). For every request, in order:
 *
 * 1. its id (`X-Request-Id`, the caller's when short and plain) and `currentRequest`: the caller's
 *    address, path and arrival; every log line written while answering carries the id;
 * 2. `ALLOWED_CIDRS`: a caller outside gets 403 `IP_NOT_ALLOWED` before its request is read;
 * 3. the drain (`Lifecycle`): while the gateway shuts down, 503 to anything but a health check,
 *    and every answer closes its connection; requests running are counted so the drain waits;
 * 4. once answered: the audit record (calls that change something, and 401/403), the metrics
 *    (by route pattern), and the access log's line.
 *
 * The refusals of 2 and 3 are made before routing; they still look the endpoint up
 * (`lookUpEndpoint`) so that the audit record, metrics and log line name the endpoint the request
 * was for. Made inside a route, they would gain the CORS headers (that middleware wraps the
 * router), and a CORS preflight, answered before any route, would get through. When the gateway
 * serves the API itself, the server writes the router's answer before the router returns, so
 * what the answer needs (the id, `connection: close`) goes on in a pre-response handler, and the
 * records of 4 are made once the client has its answer. An answer made here, or the API mounted
 * in an embedder's router (whose server writes only once the API returns), gets it on the way out.
 */
export const requestEdge = (options: RequestEdgeOptions, lookUpEndpoint: EndpointLookup) => {
  const { allowed, audit, lifecycle, metrics, trustedProxies } = options

  // Appended, not provided around the app: the request has its fiber to itself (as `currentRequest`),
  // and `withPreResponseHandler` was an acquire/release of the handlers more on every request.
  // An event stream's request lasts as long as the stream, so the drain stops counting it as
  // soon as its answer is seen: by the handler when a server writes it (the gateway's own writes
  // it before the router returns), else when the app returns it (an embedder's way of serving).
  const answering = <E, R>(app: HttpApp.Default<E, R>, tracked: TrackedRequest, detach: Effect.Effect<void>) =>
    Effect.zipRight(
      HttpApp.appendPreResponseHandler((_request, response) =>
        Effect.flatMap(lifecycle.draining, (draining) => {
          const answer = finished(response, tracked, draining)
          return isEventStream(response) ? Effect.as(detach, answer) : Effect.succeed(answer)
        })),
      Effect.tap(app, (response) => isEventStream(response) ? detach : Effect.void)
    )

  /** What is recorded of an answer; `response` only when it was made (an ended request has none to audit). */
  const recorded = (answered: AnsweredRequest, seconds: number, response?: HttpServerResponse.HttpServerResponse) =>
    Effect.withFiberRuntime<void>((fiber) => {
      const line = accessLogLine(fiber.getFiberRef(FiberRef.currentMinimumLogLevel), answered)
      const counted = Effect.zipRight(metrics.recordHttpRequest(requestSample(answered, seconds)), line)
      return response !== undefined && isAudited(answered.method, answered.status)
        ? Effect.zipRight(audit.record(auditRecordOf(answered, response)), counted)
        : counted
    })

  const record = (method: string, tracked: TrackedRequest, startedNanos: bigint) =>
  <E>(exit: Exit.Exit<HttpServerResponse.HttpServerResponse, E>) =>
    Effect.clockWith((clock) =>
      Effect.withFiberRuntime<void>((fiber) => {
        const answeredWith = (status: number): AnsweredRequest => ({
          method,
          tracked,
          status,
          // what the router matched and whom authentication let in are known only now
          matched: fiber.getFiberRef(matchedEndpoint),
          caller: fiber.getFiberRef(authenticatedCaller),
          now: clock.unsafeCurrentTimeMillis()
        })
        // the wall clock for when (the audit record, the log), the monotonic one for how long
        const seconds = Number(clock.unsafeCurrentTimeNanos() - startedNanos) / 1e9
        return Exit.isSuccess(exit)
          ? recorded(answeredWith(exit.value.status), seconds, exit.value)
          : Effect.flatMap(HttpServerError.causeResponse(exit.cause), ([response]) => recorded(answeredWith(response.status), seconds))
      }))

  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.clockWith((clock) => {
        const startedNanos = clock.unsafeCurrentTimeNanos()
        const tracked = trackedRequestOf(request, trustedProxies, clock.unsafeCurrentTimeMillis())
        const refusal = addressRefusal(allowed, tracked.clientIp)
        const answer = refusal !== undefined
          ? Effect.as(lookUpEndpoint, refusal)
          : isHealthCheck(tracked.pathname)
          ? answering(app, tracked, Effect.void)
          : lifecycle.serve((detach) => answering(app, tracked, detach), Effect.as(lookUpEndpoint, shuttingDown))
        // Set, not provided around the answer: the request has its fiber to itself (see `currentRequest`).
        return Effect.zipRight(
          Effect.zipRight(
            FiberRef.set(currentRequest, tracked),
            FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("requestId", tracked.requestId))
          ),
          answer.pipe(
            Effect.onExit(record(request.method, tracked, startedNanos)),
            Effect.flatMap((response) => Effect.map(lifecycle.draining, (draining) => finished(response, tracked, draining)))
          )
        )
      }))
}
