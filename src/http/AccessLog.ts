import { HttpServerError } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Effect, Exit } from "effect"
import { CurrentRequest } from "./RequestInfo.js"

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
    const info = yield* CurrentRequest
    if (quiet(info.pathname)) return yield* app
    return yield* Effect.onExit(app, (exit) =>
      Effect.gen(function*() {
        const status = Exit.isSuccess(exit) ? exit.value.status : (yield* HttpServerError.causeResponse(exit.cause))[0].status
        const line = status >= 500 ? Effect.logWarning("request") : Effect.logInfo("request")
        yield* line.pipe(Effect.annotateLogs({
          method: info.method,
          route: info.route?.path ?? null,
          path: info.pathname.length > 256 ? `${info.pathname.slice(0, 256)}…` : info.pathname,
          status,
          durationMs: Date.now() - info.startedAt,
          clientIp: info.clientIp,
          // filled in by the authentication step, so read only now
          keyId: info.principal?.keyId ?? null
        }))
      }))
  })
