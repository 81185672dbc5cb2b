import { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Lifecycle } from "../services/Lifecycle.js"
import { toErrorBody } from "../domain/Errors.js"
import type { EndpointLookup } from "./Endpoints.js"
import { CurrentRequest } from "./RequestTracking.js"

/** Probes keep their answers during a drain: readiness turning 503 is how a balancer learns to stop. */
const isHealthCheck = (pathname: string) => pathname.startsWith("/api/health")

/** Server-sent events never end on their own; the drain does not wait for them. */
const isEventStream = (response: HttpServerResponse.HttpServerResponse) =>
  response.headers["content-type"]?.startsWith("text/event-stream") === true

const shuttingDown = HttpServerResponse.unsafeJson(
  toErrorBody(503, { code: "SERVICE_UNAVAILABLE", message: "the gateway is shutting down; try again shortly" }),
  { status: 503, headers: { connection: "close" } }
)

/**
 * Graceful shutdown at the door (see `Lifecycle`). While the gateway drains, a new request
 * other than a health check is answered 503 at once, and every answer closes its connection,
 * so clients and proxies reconnect elsewhere; requests already running are counted, so the
 * drain can wait for them. A refused request is still looked up (`lookUpEndpoint`), so the audit
 * log and the metrics say which endpoint it was for.
 */
export const drainRequests = (lookUpEndpoint: EndpointLookup) =>
<E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | CurrentRequest | Lifecycle> =>
  Effect.flatMap(Effect.zip(Lifecycle, CurrentRequest), ([lifecycle, { pathname }]) => {
    // The server writes the router's answer before `app` returns: what the answer needs is
    // decided in a pre-response handler (one for both jobs: each costs a FiberRef change).
    const answering = (detach: Effect.Effect<void>) =>
      HttpApp.withPreResponseHandler(app, (_request, response) =>
        Effect.flatMap(lifecycle.draining, (draining) => {
          const answer = draining ? HttpServerResponse.setHeader(response, "connection", "close") : response
          return isEventStream(response) ? Effect.as(detach, answer) : Effect.succeed(answer)
        }))
    if (isHealthCheck(pathname)) return answering(Effect.void)
    return lifecycle.serve(answering, Effect.as(lookUpEndpoint, shuttingDown))
  })
