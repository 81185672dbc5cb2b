import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CreatedWebhook, CreateWebhookRequest, Delivery, TestResult, UpdateWebhookRequest, Webhook } from "../domain/Webhook.js"
import { Authentication } from "./Authentication.js"
import { RequiredRole } from "./Endpoints.js"
import { ListBody, PageParams } from "./Pagination.js"
import { readsHeader } from "./openApiDocument.js"

/** The contract's webhooks and live events (the `webhooks` and `events` groups of SwitchboardApi in ./Api.ts). */

const webhookPath = Schema.Struct({ webhookId: Schema.String })
const sessionPath = Schema.Struct({ sessionId: Schema.String })
const pageParams = Schema.Struct(PageParams)

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(HttpApiEndpoint.get("list", "/webhooks").annotate(RequiredRole, "viewer").setUrlParams(pageParams).addSuccess(ListBody(Webhook)))
  .add(HttpApiEndpoint.post("create", "/webhooks").annotate(RequiredRole, "operator").setPayload(CreateWebhookRequest).addSuccess(CreatedWebhook, { status: 201 }))
  .add(HttpApiEndpoint.get("listForSession", "/sessions/:sessionId/webhooks").annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Webhook)))
  .add(
    HttpApiEndpoint.post("createForSession", "/sessions/:sessionId/webhooks").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(CreateWebhookRequest)
      .addSuccess(CreatedWebhook, { status: 201 })
  )
  .add(HttpApiEndpoint.get("get", "/webhooks/:webhookId").annotate(RequiredRole, "viewer").setPath(webhookPath).addSuccess(Webhook))
  .add(HttpApiEndpoint.put("update", "/webhooks/:webhookId").annotate(RequiredRole, "operator").setPath(webhookPath).setPayload(UpdateWebhookRequest).addSuccess(Webhook))
  .add(HttpApiEndpoint.del("remove", "/webhooks/:webhookId").annotate(RequiredRole, "operator").setPath(webhookPath).addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.post("test", "/webhooks/:webhookId/test").annotate(RequiredRole, "operator").setPath(webhookPath).addSuccess(TestResult))
  .add(HttpApiEndpoint.get("deliveries", "/webhooks/:webhookId/deliveries").annotate(RequiredRole, "viewer").setPath(webhookPath).setUrlParams(pageParams).addSuccess(ListBody(Delivery)))
  .add(
    HttpApiEndpoint.post("redeliver", "/webhooks/deliveries/:deliveryId/redeliver").annotate(RequiredRole, "operator")
      .setPath(Schema.Struct({ deliveryId: Schema.String }))
      .addSuccess(Delivery)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Signed (Standard Webhooks) deliveries of the domain events, from a durable outbox, with retries.")
{}

const EventStream = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" }))

export class LiveEventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("stream", "/events").annotate(RequiredRole, "viewer")
      .setUrlParams(Schema.Struct({
        sessionId: Schema.optional(Schema.String),
        events: Schema.optional(Schema.String.annotations({ description: "comma-separated event kinds; all when absent" }))
      }))
      .addSuccess(EventStream)
      .annotate(OpenApi.Description, "Server-Sent Events with the webhook envelopes; send Last-Event-ID to resume after a disconnect.")
      .annotate(OpenApi.Transform, readsHeader("Last-Event-ID", "the id of the last event received: the stream resumes after it"))
  )
  .middleware(Authentication)
{}
