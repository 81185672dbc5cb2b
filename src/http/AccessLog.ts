import { HttpServerError, HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Clock, Effect, Exit, FiberRef, LogLevel, Option } from "effect"
import { matchedEndpoint } from "./Endpoints.js"
import { authenticatedCaller, CurrentRequest } from "./RequestTracking.js"

/** Probes call every few seconds; a line each would drown the rest. */
const quiet = (pathname: string) => pathname.startsWith("/api/health")

/**
 * One log line per API request, written when its answer is ready: method, endpoint (the route
 * pattern, and the path without its query string), status, duration, caller address and key
 * id; the request id comes from `trackRequests`' annotation. Query strings, headers and bodies
 * are never logged: they carry keys, tokens and messages. A request the client gave up on is
 * logged with 499.
 */
export const logRequests = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | CurrentRequest> =>
  Effect.gen(function*() {
    const { method } = yield* HttpServerRequest.HttpServerRequest
    const { clientIp, pathname, startedAt } = yield* CurrentRequest
    // Below the log level nothing is gathered: a line per request costs more than most handlers.
    const minimum = yield* FiberRef.get(FiberRef.currentMinimumLogLevel)
    if (quiet(pathname) || LogLevel.greaterThan(minimum, LogLevel.Warning)) return yield* app
    const successesLogged = LogLevel.lessThanEqual(minimum, LogLevel.Info)
    return yield* Effect.onExit(app, (exit) =>
      Effect.gen(function*() {
        const status = Exit.isSuccess(exit) ? exit.value.status : (yield* HttpServerError.causeResponse(exit.cause))[0].status
        if (status < 500 && !successesLogged) return
        const line = status >= 500 ? Effect.logWarning("request") : Effect.logInfo("request")
        // what the router matched and whom authentication let in are known only now
        const matched = yield* FiberRef.get(matchedEndpoint)
        const caller = yield* FiberRef.get(authenticatedCaller)
        yield* line.pipe(Effect.annotateLogs({
          method,
          route: Option.getOrNull(Option.map(matched, ({ endpoint }) => endpoint.path)),
          path: pathname.length > 256 ? `${pathname.slice(0, 256)}…` : pathname,
          status,
          durationMs: (yield* Clock.currentTimeMillis) - startedAt,
          clientIp,
          keyId: Option.getOrNull(Option.map(caller, (principal) => principal.keyId))
        }))
      }))
  })
