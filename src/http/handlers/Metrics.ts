import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Metrics } from "../../runtime/Metrics.js"
import { SwitchboardApi } from "../Api.js"

export const MetricsHandlers = HttpApiBuilder.group(SwitchboardApi, "metrics", (handlers) =>
  Effect.map(Metrics, (metrics) => handlers.handle("metrics", answeringStoreOutage(() => metrics.scrape))))
