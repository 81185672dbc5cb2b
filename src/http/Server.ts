import { type HttpApp, HttpApiBuilder, HttpApiSwagger, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Console, Layer } from "effect"
import { createServer } from "node:http"
import type { Settings } from "../domain/Settings.js"
import { networkList } from "../domain/cidr.js"
import { VERSION } from "../domain/Health.js"
import { SwitchboardApi } from "./Api.js"
import { logRequests } from "./AccessLog.js"
import { AuthenticationLive } from "./Authentication.js"
import { limitBodies } from "./BodyLimit.js"
import { drainRequests } from "./Draining.js"
import { ErrorResponses } from "./ErrorResponses.js"
import { auditRequests } from "./Auditing.js"
import { networkAllowList } from "./NetworkAllowList.js"
import { trackRequests } from "./RequestInfo.js"
import { recordRequestMetrics } from "./RequestMetrics.js"
import { ChannelsHandlers, ContactsHandlers, GroupsHandlers, LabelsHandlers } from "./handlers/Directory.js"
import { HealthHandlers } from "./handlers/Health.js"
import { MetricsHandlers } from "./handlers/Metrics.js"
import { ApiKeysHandlers, AuditHandlers } from "./handlers/Security.js"
import { LiveEventsHandlers, WebhooksHandlers } from "./handlers/Webhooks.js"
import { MessagesHandlers } from "./handlers/Messages.js"
import { SessionsHandlers } from "./handlers/Sessions.js"

/** The API with every handler; needs the services (Sessions, Messaging, ApiKeys, Health). */
export const ApiLive = HttpApiBuilder.api(SwitchboardApi).pipe(
  Layer.provide([
    HealthHandlers,
    SessionsHandlers,
    MessagesHandlers,
    GroupsHandlers,
    ChannelsHandlers,
    LabelsHandlers,
    ContactsHandlers,
    WebhooksHandlers,
    LiveEventsHandlers,
    MetricsHandlers,
    ApiKeysHandlers,
    AuditHandlers
  ]),
  Layer.provide(AuthenticationLive)
)

/**
 * Prints where the API listens, whatever LOG_LEVEL says: scripts and operators wait for it,
 * and with PORT=0 it is the only way to learn the port.
 */
const announceAddress = Layer.effectDiscard(
  HttpServer.addressFormattedWith((address) => Console.log(`Switchboard ${VERSION} Listening on ${address} (API at /api, Swagger UI at /api/docs)`))
)

/**
 * The REST server on `host:port`, with OpenAPI at /api/openapi.json and Swagger UI at /api/docs.
 * Its `HttpServer` stays in the output, so embedders and tests can read the bound address.
 */
export const HttpServerLive = (options: Settings) => {
  const track = trackRequests(networkList(options.security.trustedProxies))
  const allowList = networkAllowList(networkList(options.security.allowedCidrs))
  // Outermost last: every request gets its id and RequestInfo before anything else looks at it.
  const pipeline = (app: HttpApp.Default) => track(recordRequestMetrics(logRequests(auditRequests(allowList(drainRequests(limitBodies(options.bodyMaxBytes, options.media.maxBytes)(app)))))))
  return HttpApiBuilder.serve(pipeline).pipe(
    Layer.provide(HttpApiSwagger.layer({ path: "/api/docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
    // The dashboard (another port) and browser apps call the API cross-origin. Keys travel in
    // headers, never cookies, so any origin may: a page cannot borrow a key it was not given.
    Layer.provide(HttpApiBuilder.middlewareCors({
      exposedHeaders: ["x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after", "content-disposition"],
      maxAge: 600
    })),
    Layer.provide(ErrorResponses),
    Layer.provide(ApiLive),
    Layer.provideMerge(announceAddress),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
}
