import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Schema, Stream } from "effect"
import { type DomainEvent, EventKind } from "../../services/Events.js"
import { LiveEvents } from "../../services/LiveEvents.js"
import { type Page, type PageRequest, toListBody } from "../../services/Pagination.js"
import { ValidationFailed } from "../../services/Errors.js"
import { Webhooks } from "../../services/Webhooks.js"
import { SwitchboardApi } from "../Api.js"
import { pageRequest } from "../Pagination.js"

export const WebhooksHandlers = HttpApiBuilder.group(SwitchboardApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks
    /** A list in the pagination convention: the page asked for, or everything. */
    const listed = <A, E>(
      query: { readonly page?: string | undefined; readonly limit?: string | undefined },
      list: (page: Option.Option<PageRequest>) => Effect.Effect<Page<A>, E>
    ) => Effect.flatMap(pageRequest(query), (page) => Effect.map(list(page), (found) => toListBody(page, found)))
    return handlers
      .handle("list", ({ urlParams }) => listed(urlParams, (page) => webhooks.list({ global: true }, page)))
      .handle("create", ({ payload }) => webhooks.create(null, payload))
      .handle("listForSession", ({ path, urlParams }) => listed(urlParams, (page) => webhooks.list({ sessionId: path.sessionId }, page)))
      .handle("createForSession", ({ path, payload }) => webhooks.create(path.sessionId, payload))
      .handle("get", ({ path }) => webhooks.get(path.webhookId))
      .handle("update", ({ path, payload }) => webhooks.update(path.webhookId, payload))
      .handle("remove", ({ path }) => webhooks.remove(path.webhookId))
      .handle("test", ({ path }) => webhooks.test(path.webhookId))
      .handle("deliveries", ({ path, urlParams }) => listed(urlParams, (page) => webhooks.deliveries(path.webhookId, page)))
      .handle("redeliver", ({ path }) => webhooks.redeliver(path.deliveryId))
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
    return handlers.handleRaw("stream", ({ request, urlParams }) =>
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
        const lastEventId = Option.fromNullable(request.headers["last-event-id"]).pipe(Option.filter((id) => id.trim() !== ""))
        const events = live.stream({ sessionId: urlParams.sessionId, kinds: kinds?.filter(isEventKind) }, lastEventId).pipe(Stream.map(sseFrame))
        const heartbeat = Stream.tick(HEARTBEAT).pipe(Stream.map(() => encoder.encode(": keep-alive\n\n")))
        return HttpServerResponse.stream(Stream.merge(events, heartbeat, { haltStrategy: "left" }), {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      }))
  }))
