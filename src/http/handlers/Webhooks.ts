import { answeringStoreOutage } from "../ErrorResponses.js"
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema, Stream } from "effect"
import { type DomainEvent, EventKind } from "../../domain/Events.js"
import { LiveEvents } from "../../services/LiveEvents.js"
import { ValidationFailed } from "../../domain/Errors.js"
import { CurrentPrincipal } from "../../domain/Principal.js"
import type { Webhook } from "../../domain/Webhook.js"
import { Webhooks } from "../../services/Webhooks.js"
import { requireEverySession, requireSession } from "../AccessPolicy.js"
import { SwitchboardApi } from "../Api.js"
import { listed } from "../Pagination.js"

export const WebhooksHandlers = HttpApiBuilder.group(SwitchboardApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    /** A key limited to some sessions reaches their webhooks only; global webhooks hear every session. */
    const mayUse = <E>(webhook: Effect.Effect<Webhook, E>) =>
      Effect.gen(function*() {
        const principal = yield* CurrentPrincipal
        if (principal.allowedSessions === null) return
        const { sessionId } = yield* webhook
        yield* sessionId === null ? requireEverySession(principal) : requireSession(principal, sessionId)
      })
    const everySession = Effect.flatMap(CurrentPrincipal, requireEverySession)
    const ofWebhook = (webhookId: string) => mayUse(webhooks.get(webhookId))
    return handlers
      .handle("list", answeringStoreOutage(({ urlParams }) => Effect.zipRight(everySession, listed(urlParams, (page) => webhooks.list({ global: true }, page)))))
      .handle("create", answeringStoreOutage(({ payload }) => Effect.zipRight(everySession, webhooks.create(null, payload))))
      .handle("listForSession", answeringStoreOutage(({ path, urlParams }) => listed(urlParams, (page) => webhooks.list({ sessionId: path.sessionId }, page))))
      .handle("createForSession", answeringStoreOutage(({ path, payload }) => webhooks.create(path.sessionId, payload)))
      .handle("get", answeringStoreOutage(({ path }) => Effect.zipRight(ofWebhook(path.webhookId), webhooks.get(path.webhookId))))
      .handle("update", answeringStoreOutage(({ path, payload }) => Effect.zipRight(ofWebhook(path.webhookId), webhooks.update(path.webhookId, payload))))
      .handle("remove", answeringStoreOutage(({ path }) => Effect.zipRight(ofWebhook(path.webhookId), webhooks.remove(path.webhookId))))
      .handle("test", answeringStoreOutage(({ path }) => Effect.zipRight(ofWebhook(path.webhookId), webhooks.test(path.webhookId))))
      .handle("deliveries", answeringStoreOutage(({ path, urlParams }) =>
        Effect.zipRight(ofWebhook(path.webhookId), listed(urlParams, (page) => webhooks.deliveries(path.webhookId, page)))))
      .handle("redeliver", answeringStoreOutage(({ path }) => Effect.zipRight(mayUse(webhooks.webhookOfDelivery(path.deliveryId)), webhooks.redeliver(path.deliveryId))))
  }))

/** A comment line every 15 s keeps proxies and load balancers from closing a quiet stream. */
const HEARTBEAT = "15 seconds"

const encoder = new TextEncoder()
const sseFrame = (event: DomainEvent) =>
  encoder.encode(`id: ${event.id}\nevent: ${event.event}\ndata: ${JSON.stringify(event)}\n\n`)

const isEventKind = Schema.is(EventKind)

export const LiveEventsHandlers = HttpApiBuilder.group(SwitchboardApi, "events", (handlers) =>
  Effect.gen(function*() {
    const live = yield* LiveEvents
    return handlers.handleRaw("stream", answeringStoreOutage(({ request, urlParams }) =>
      Effect.gen(function*() {
        const kinds = urlParams.events === undefined ? undefined : urlParams.events.split(",").map((kind) => kind.trim()).filter((kind) => kind !== "")
        const unknown = kinds?.filter((kind) => !isEventKind(kind)) ?? []
        if (unknown.length > 0) {
          return yield* new ValidationFailed({
            code: "VALIDATION_FAILED",
            message: `unknown event kinds: ${unknown.join(", ")}`,
            details: { known: EventKind.literals }
          })
        }
        const principal = yield* CurrentPrincipal
        yield* urlParams.sessionId === undefined ? requireEverySession(principal) : requireSession(principal, urlParams.sessionId)
        const lastEventId = Option.fromNullable(request.headers["last-event-id"]).pipe(Option.filter((id) => id.trim() !== ""))
        const events = live.stream({ sessionId: urlParams.sessionId, kinds: kinds?.filter(isEventKind) }, lastEventId).pipe(Stream.map(sseFrame))
        const heartbeat = Stream.tick(HEARTBEAT).pipe(Stream.map(() => encoder.encode(": keep-alive\n\n")))
        return HttpServerResponse.stream(Stream.merge(events, heartbeat, { haltStrategy: "left" }), {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      })))
  }))
