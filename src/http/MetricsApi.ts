import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"

/** The Prometheus text exposition format, version 0.0.4. */
/** The Prometheus text format, as prom-client's `Registry.PROMETHEUS_CONTENT_TYPE` names it (not imported: a client of the contract would load prom-client). */
const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"
const Exposition = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: PROMETHEUS_TEXT }))

export class MetricsGroup extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics").addSuccess(Exposition).annotate(RequiredRole, "admin").annotate(OpenApi.Identifier, "metrics.get")
      .annotate(OpenApi.Summary, "Prometheus metrics")
      .annotate(OpenApi.Description, "The gateway's metrics in Prometheus' text format. Admin keys, or METRICS_TOKEN.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Prometheus metrics in the text format: sessions, messages, webhook deliveries, HTTP requests, the process.")
{}
