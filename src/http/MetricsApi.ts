import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Registry } from "prom-client"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"

/** The Prometheus text exposition format, version 0.0.4. */
const Exposition = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: Registry.PROMETHEUS_CONTENT_TYPE }))

export class MetricsGroup extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics").addSuccess(Exposition).annotate(RequiredRole, "admin").annotate(OpenApi.Identifier, "metrics.get")
      .annotate(OpenApi.Summary, "Prometheus metrics")
      .annotate(OpenApi.Description, "The gateway's metrics in Prometheus' text format. Admin keys, or METRICS_TOKEN.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Prometheus metrics in the text format: sessions, messages, webhook deliveries, HTTP requests, the process.")
{}
