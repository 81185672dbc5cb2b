import { HttpServerResponse } from "@effect/platform"
import { toErrorBody } from "../domain/Errors.js"

/**
 * Graceful shutdown at the door (see `Lifecycle` and `requestEdge`). While the gateway drains,
 * a new request other than a health check is answered 503 at once (`shuttingDown`), and every
 * answer closes its connection, so clients and proxies reconnect elsewhere; requests already
 * running are counted, so the drain can wait for them.
 */

/** Probes keep their answers during a drain: readiness turning 503 is how a balancer learns to stop. */
export const isHealthCheck = (pathname: string) => pathname.startsWith("/api/health")

/** Server-sent events never end on their own; the drain does not wait for them. */
export const isEventStream = (response: HttpServerResponse.HttpServerResponse) =>
  response.headers["content-type"]?.startsWith("text/event-stream") === true

export const shuttingDown = HttpServerResponse.unsafeJson(
  toErrorBody(503, { code: "SERVICE_UNAVAILABLE", message: "the gateway is shutting down; try again shortly" }),
  { status: 503, headers: { connection: "close" } }
)
