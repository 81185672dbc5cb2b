import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Lifecycle } from "../../services/Lifecycle.js"
import { ServiceUnavailable } from "../../domain/Errors.js"
import { Health } from "../../services/Health.js"
import { SwitchboardApi } from "../Api.js"

export const HealthHandlers = HttpApiBuilder.group(SwitchboardApi, "health", (handlers) =>
  Effect.gen(function*() {
    const health = yield* Health
    const lifecycle = yield* Lifecycle
    return handlers
      .handle("health", answeringStoreOutage(() => health.report))
      .handle("live", answeringStoreOutage(() => Effect.succeed({ status: "ok" as const })))
      .handle("ready", answeringStoreOutage(() =>
        Effect.gen(function*() {
          // A draining gateway is alive but takes no new work: balancers should stop sending.
          if (yield* lifecycle.draining) {
            return yield* new ServiceUnavailable({ code: "SERVICE_UNAVAILABLE", message: "not ready: shutting down" })
          }
          const report = yield* health.report
          if (report.status === "ok") return { status: "ready" as const }
          return yield* new ServiceUnavailable({ code: "SERVICE_UNAVAILABLE", message: `not ready: ${report.status}`, details: report.checks })
        })))
  }))
