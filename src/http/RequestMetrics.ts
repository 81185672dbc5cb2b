import { HttpServerError, HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { Clock, Effect, Exit, FiberRef, Option } from "effect"
import { Metrics } from "../runtime/Metrics.js"
import { matchedEndpoint } from "./Endpoints.js"

/**
 * Counts and times every request, by method, status and route pattern: the pattern the request
 * matched (`/api/sessions/:sessionId`), never its path, whose ids would make a label without
 * bound; "unmatched" when no route took the request. A request that ended in a defect or an
 * interruption counts with the status its answer was given.
 */
export const recordRequestMetrics = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | Metrics> =>
  Effect.gen(function*() {
    const { method } = yield* HttpServerRequest.HttpServerRequest
    const metrics = yield* Metrics
    const startedAt = yield* Clock.currentTimeNanos
    const record = (status: number) =>
      Effect.flatMap(Effect.zip(Clock.currentTimeNanos, FiberRef.get(matchedEndpoint)), ([now, matched]) =>
        metrics.recordHttpRequest({
          method,
          route: Option.match(matched, { onNone: () => "unmatched", onSome: ({ endpoint }) => endpoint.path }),
          status,
          seconds: Number(now - startedAt) / 1e9
        }))
    return yield* Effect.onExit(app, (exit) =>
      Exit.isSuccess(exit)
        ? record(exit.value.status)
        : Effect.flatMap(HttpServerError.causeResponse(exit.cause), ([response]) => record(response.status)))
  })
