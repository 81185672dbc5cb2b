import { Effect, LogLevel, Option } from "effect"
import type { AnsweredRequest } from "./RequestTracking.js"

/** Probes call every few seconds; a line each would drown the rest. */
const quiet = (pathname: string) => pathname.startsWith("/api/health")

/**
 * One log line per API request, written when its answer is ready (see `requestEdge`): method,
 * endpoint (the route pattern, and the path without its query string), status, duration, caller
 * address and key id; the request id comes from the request's log annotation. Query strings,
 * headers and bodies are never logged: they carry keys, tokens and messages. A request the
 * client gave up on is logged with 499. Successes are logged at Info, server errors at Warning;
 * below the log level nothing is gathered (a line per request costs more than most handlers).
 */
export const accessLogLine = (minimum: LogLevel.LogLevel, answered: AnsweredRequest): Effect.Effect<void> => {
  const { caller, matched, method, now, status, tracked } = answered
  if (quiet(tracked.pathname) || LogLevel.greaterThan(minimum, status >= 500 ? LogLevel.Warning : LogLevel.Info)) return Effect.void
  const line = status >= 500 ? Effect.logWarning("request") : Effect.logInfo("request")
  const { clientIp, pathname, startedAt } = tracked
  return line.pipe(Effect.annotateLogs({
    method,
    route: Option.getOrNull(Option.map(matched, ({ endpoint }) => endpoint.path)),
    path: pathname.length > 256 ? `${pathname.slice(0, 256)}…` : pathname,
    status,
    durationMs: now - startedAt,
    clientIp,
    keyId: Option.getOrNull(Option.map(caller, (principal) => principal.keyId))
  }))
}
