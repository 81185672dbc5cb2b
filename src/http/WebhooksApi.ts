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
  .add(
    HttpApiEndpoint.get("list", "/webhooks").annotate(RequiredRole, "viewer").setUrlParams(pageParams).addSuccess(ListBody(Webhook))
      .annotate(OpenApi.Summary, "List webhooks")
      .annotate(OpenApi.Description, "Every webhook: those for all sessions and those for one.")
  )
  .add(
    HttpApiEndpoint.post("create", "/webhooks").annotate(RequiredRole, "operator").setPayload(CreateWebhookRequest).addSuccess(CreatedWebhook, { status: 201 })
      .annotate(OpenApi.Summary, "Create a webhook")
      .annotate(OpenApi.Description, "Subscribes a URL to events of every session. The signing secret (whsec_…) is in this answer only. Private and loopback addresses are refused unless WEBHOOK_ALLOW_PRIVATE is set.")
  )
  .add(
    HttpApiEndpoint.get("listForSession", "/sessions/:sessionId/webhooks").annotate(RequiredRole, "viewer").setPath(sessionPath).setUrlParams(pageParams).addSuccess(ListBody(Webhook))
      .annotate(OpenApi.Summary, "List a session's webhooks")
      .annotate(OpenApi.Description, "The webhooks that receive this session's events only.")
  )
  .add(
    HttpApiEndpoint.post("createForSession", "/sessions/:sessionId/webhooks").annotate(RequiredRole, "operator")
      .setPath(sessionPath)
      .setPayload(CreateWebhookRequest)
      .addSuccess(CreatedWebhook, { status: 201 })
      .annotate(OpenApi.Summary, "Create a webhook for a session")
      .annotate(OpenApi.Description, "Subscribes a URL to this session's events only. The signing secret is in this answer only.")
  )
  .add(
    HttpApiEndpoint.get("get", "/webhooks/:webhookId").annotate(RequiredRole, "viewer").setPath(webhookPath).addSuccess(Webhook)
      .annotate(OpenApi.Summary, "Get a webhook")
      .annotate(OpenApi.Description, "One webhook, without its secret.")
  )
  .add(
    HttpApiEndpoint.put("update", "/webhooks/:webhookId").annotate(RequiredRole, "operator").setPath(webhookPath).setPayload(UpdateWebhookRequest).addSuccess(Webhook)
      .annotate(OpenApi.Summary, "Update a webhook")
      .annotate(OpenApi.Description, "Changes the fields given (url, events, headers, enabled, maxAttempts) and keeps the others.")
  )
  .add(
    HttpApiEndpoint.del("remove", "/webhooks/:webhookId").annotate(RequiredRole, "operator").setPath(webhookPath).addSuccess(HttpApiSchema.NoContent)
      .annotate(OpenApi.Summary, "Delete a webhook")
      .annotate(OpenApi.Description, "Deletes the webhook: it receives no more deliveries.")
  )
  .add(
    HttpApiEndpoint.post("test", "/webhooks/:webhookId/test").annotate(RequiredRole, "operator").setPath(webhookPath).addSuccess(TestResult)
      .annotate(OpenApi.Summary, "Send a test delivery")
      .annotate(OpenApi.Description, "Delivers a test event to the webhook now and answers how it went (status code, error, duration).")
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:webhookId/deliveries").annotate(RequiredRole, "viewer").setPath(webhookPath).setUrlParams(pageParams).addSuccess(ListBody(Delivery))
      .annotate(OpenApi.Summary, "List a webhook's deliveries")
      .annotate(OpenApi.Description, "The webhook's deliveries, newest first, with their status and attempts.")
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/webhooks/deliveries/:deliveryId/redeliver").annotate(RequiredRole, "operator")
      .setPath(Schema.Struct({ deliveryId: Schema.String }))
      .addSuccess(Delivery)
      .annotate(OpenApi.Summary, "Redeliver an event")
      .annotate(OpenApi.Description, "Queues a delivery again, whatever its status; answers the delivery.")
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
      .annotate(OpenApi.Summary, "Stream live events")
  )
  .middleware(Authentication)
{}
