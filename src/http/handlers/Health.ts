import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../services/Errors.js"
import { Health } from "../../services/Health.js"
import { SwitchboardApi } from "../Api.js"

export const HealthHandlers = HttpApiBuilder.group(SwitchboardApi, "health", (handlers) =>
  Effect.gen(function*() {
    const health = yield* Health
    return handlers
      .handle("health", () => health.report)
      .handle("live", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.flatMap(health.report, (report) =>
          report.status === "ok"
            ? Effect.succeed({ status: "ready" as const })
            : Effect.fail(new ServiceUnavailable({ code: "SERVICE_UNAVAILABLE", message: `not ready: ${report.status}`, details: report.checks }))))
  }))
