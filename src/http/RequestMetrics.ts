import { HttpServerError } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Clock, Effect, Exit } from "effect"
import { Metrics } from "../runtime/Metrics.js"
import { CurrentRequest } from "./RequestInfo.js"

/**
 * Counts and times every request, by method, status and route pattern: the pattern the request
 * matched (`/api/sessions/:sessionId`), never its path, whose ids would make a label without
 * bound. Runs inside `trackRequests`, which matched the route. A request that ended in a defect
 * or an interruption counts with the status its answer was given.
 */
export const recordRequestMetrics = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | CurrentRequest | Metrics> =>
  Effect.gen(function*() {
    const info = yield* CurrentRequest
    const metrics = yield* Metrics
    const startedAt = yield* Clock.currentTimeNanos
    const record = (status: number) =>
      Effect.flatMap(Clock.currentTimeNanos, (now) =>
        metrics.recordHttpRequest({
          method: info.method,
          route: info.route?.path ?? "unmatched",
          status,
          seconds: Number(now - startedAt) / 1e9
        }))
    return yield* Effect.onExit(app, (exit) =>
      Exit.isSuccess(exit)
        ? record(exit.value.status)
        : Effect.flatMap(HttpServerError.causeResponse(exit.cause), ([response]) => record(response.status)))
  })
