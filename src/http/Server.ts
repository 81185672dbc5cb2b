import {
  type HttpApp,
  HttpApiBuilder,
  HttpMiddleware,
  HttpRouter,
  HttpServer,
  HttpServerRequest
} from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Console, Context, Effect, Layer, type Scope } from "effect"
import { createServer } from "node:http"
import type { Settings } from "../domain/Settings.js"
import { networkList } from "../domain/cidr.js"
import { VERSION } from "../domain/Health.js"
import { SwitchboardApi } from "./Api.js"
import { ApiDocumentsLive } from "./ApiDocuments.js"
import { AuthenticationLive } from "./AuthenticationLive.js"
import { limitBodies } from "./BodyLimit.js"
import { requestEdge, type RequestEdgeOptions } from "./RequestEdge.js"
import { Lifecycle } from "../services/Lifecycle.js"
import { Metrics } from "../runtime/Metrics.js"
import { Audit } from "../services/Audit.js"
import { ErrorResponses } from "./ErrorResponses.js"
import { onlyApiServices } from "./apiServices.js"
import { type EndpointLookup, endpointLookup, endpointsOf, reportMatchedEndpoint, type RouteWrapper } from "./Endpoints.js"
import { ChannelsHandlers, ContactsHandlers, GroupsHandlers, LabelsHandlers } from "./handlers/Directory.js"
import { ChatsHandlers } from "./handlers/Chats.js"
import { HealthHandlers } from "./handlers/Health.js"
import { MetricsHandlers } from "./handlers/Metrics.js"
import { ApiKeysHandlers, AuditHandlers } from "./handlers/Security.js"
import { LiveEventsHandlers, WebhooksHandlers } from "./handlers/Webhooks.js"
import { MessagesHandlers } from "./handlers/Messages.js"
import { MessageActionsHandlers, PresenceHandlers } from "./handlers/MessageActions.js"
import { SessionsHandlers } from "./handlers/Sessions.js"
import { ProfileHandlers } from "./handlers/Profile.js"
import { CallsHandlers, SandboxHandlers, SettingsHandlers, StatusHandlers } from "./handlers/StatusCalls.js"

/** The API with every handler; needs the services (Sessions, Messaging, ApiKeys, Health). */
export const ApiLive = HttpApiBuilder.api(SwitchboardApi).pipe(
  Layer.provide([
    HealthHandlers,
    SessionsHandlers,
    MessagesHandlers,
    MessageActionsHandlers,
    PresenceHandlers,
    GroupsHandlers,
    ChannelsHandlers,
    LabelsHandlers,
    ContactsHandlers,
    ChatsHandlers,
    ProfileHandlers,
    WebhooksHandlers,
    LiveEventsHandlers,
    MetricsHandlers,
    ApiKeysHandlers,
    AuditHandlers,
    SettingsHandlers,
    StatusHandlers,
    CallsHandlers,
    SandboxHandlers
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
 * The API's `HttpApp`, as `HttpApiBuilder.httpApp` makes it, with `reportEndpoint(aroundRoute(handler))`
 * around every route's handler: inside the router, where the route it matched and the
 * parameters it read are known (`HttpRouter.RouteContext`), and before the endpoint's own
 * middleware (authentication). `middleware` wraps the whole API, before routing; it is given a
 * lookup that runs the same routes with `reportEndpoint` alone, for the refusals it makes itself.
 */
const routedApp = <R>(options: {
  readonly reportEndpoint: RouteWrapper
  readonly aroundRoute: RouteWrapper
  readonly middleware: (lookUpEndpoint: EndpointLookup) => (app: HttpApp.Default) => HttpApp.Default<never, R>
}) =>
  Effect.gen(function*() {
    const router = yield* HttpApiBuilder.Router
    const routes = yield* router.router
    const wrapped = HttpRouter.use(routes, (handler) => options.reportEndpoint(options.aroundRoute(handler)))
    const routed = HttpApiBuilder.Router.of({ ...router, router: Effect.succeed(wrapped) })
    const app = yield* Effect.provideService(HttpApiBuilder.httpApp, HttpApiBuilder.Router, routed)
    const lookUpEndpoint = yield* endpointLookup(routes, options.reportEndpoint)
    // As HttpApiBuilder.serve does: the server it runs on (ours or the embedder's) supplies the
    // default services the app needs.
    return { app: app as HttpApp.Default, middleware: options.middleware(lookUpEndpoint) }
  })

/** The API with the gateway's request middleware (`requestEdge`) around its router. */
const apiOf = (options: Settings) =>
  Effect.gen(function*() {
    const edge: RequestEdgeOptions = {
      trustedProxies: networkList(options.security.trustedProxies),
      allowed: networkList(options.security.allowedCidrs),
      lifecycle: yield* Lifecycle,
      metrics: yield* Metrics,
      audit: yield* Audit
    }
    // Inside the router: the endpoint is reported first, then the body is capped by its rules.
    return yield* routedApp({
      reportEndpoint: reportMatchedEndpoint(endpointsOf(SwitchboardApi)),
      aroundRoute: limitBodies(options.bodyMaxBytes, options.media.maxBytes),
      middleware: (lookUpEndpoint) => requestEdge(edge, lookUpEndpoint)
    })
  })

/**
 * What every way of serving the API reads: its routes and handlers, CORS, error shapes, the
 * OpenAPI document. `serveApi` and `apiAppLayer` build it over the API's services only
 * (`onlyApiServices`); an app mounted in an embedder's server still runs each request with that
 * server's context merged in (see `apiAppLayer`).
 */
const withApiLayers = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  layer.pipe(
    Layer.provide([HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer]),
    Layer.provide(ApiDocumentsLive),
    // The dashboard (another port) and browser apps call the API cross-origin. Keys travel in
    // headers, never cookies, so any origin may: a page cannot borrow a key it was not given.
    Layer.provide(HttpApiBuilder.middlewareCors({
      exposedHeaders: ["x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after", "content-disposition"],
      maxAge: 600
    })),
    Layer.provide(ErrorResponses),
    Layer.provide(ApiLive)
  )

/**
 * The REST API with all of its behaviour (error shaping, body caps, request ids, the network
 * allow-list, draining, audit, metrics, the access log, CORS, OpenAPI and Swagger UI), served
 * on whatever `HttpServer` the context holds: the gateway's own (`HttpServerLive`) or an
 * embedder's. `ApiLive` alone is only the routes: served bare, a bad body would answer
 * `{"issues":[…]}` quoting the input, and nothing would cap or drain. It runs with the API's
 * services only (`onlyApiServices`), not whatever else the context holds.
 */
export const serveApi = (options: Settings) =>
  onlyApiServices(withApiLayers(Layer.unwrapEffect(Effect.map(apiOf(options), ({ app, middleware }) => HttpServer.serve(app, middleware))))).pipe(
    // No span per request: no tracer is exported, and the span parsed the URL, redacted and
    // copied every header, and cost ~35 Effect operations a request (issue 19). The request id,
    // the access log and the metrics are the gateway's own (RequestEdge).
    HttpMiddleware.withTracerDisabledWhen(() => true)
  )

/**
 * The REST API as an `HttpApp`, for an embedder's own router or server beside routes of its
 * own: `HttpRouter.mountApp("/api", app, { includePrefix: true })` (the API's paths start with
 * `/api`). The same behaviour as `serveApi`: the API's error shapes (an unknown path under `/api`
 * is its 404), body caps, request ids, allow-list, audit, metrics, the access log and draining.
 */
export class SwitchboardHttpApp extends Context.Tag("switchboard/SwitchboardHttpApp")<
  SwitchboardHttpApp,
  HttpApp.Default<never, HttpServerRequest.HttpServerRequest | Scope.Scope>
>() {}

/**
 * `SwitchboardHttpApp` over the core's services, which it holds from here on: each request runs
 * with them under what its server gives it (its own request, scope and span win).
 */
export const apiAppLayer = (options: Settings) =>
  onlyApiServices(withApiLayers(Layer.effect(
    SwitchboardHttpApp,
    Effect.gen(function*() {
      const { app, middleware } = yield* apiOf(options)
      const served = middleware(app)
      const built = yield* Effect.context<Exclude<Effect.Effect.Context<typeof served>, HttpServerRequest.HttpServerRequest | Scope.Scope>>()
      return SwitchboardHttpApp.of(Effect.mapInputContext(served, (perRequest: Context.Context<HttpServerRequest.HttpServerRequest | Scope.Scope>) => Context.merge(built, perRequest)))
    })
  )))

/**
 * Serves the embedder's app, made around the API's (`SwitchboardHttpApp`), on the context's
 * `HttpServer`, and drains Switchboard before that server stops: acquired after it, the drain
 * runs while the server still answers (503 to new requests, health, the requests in flight
 * finishing), as on the gateway's own server. Served with a plain `HttpServer.serve`, the
 * server would stop first and requests during the drain would get no answer at all.
 */
export const serveWithSwitchboardApi = <E, R>(app: (api: SwitchboardHttpApp["Type"]) => HttpApp.Default<E, R>) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const lifecycle = yield* Lifecycle
    yield* HttpServer.serveEffect()(app(yield* SwitchboardHttpApp))
    // Added after the server's own finalizer, so it runs before it.
    yield* Effect.addFinalizer(() => lifecycle.drain)
  }))

/**
 * The REST server on `host:port`, with OpenAPI at /api/openapi.json and Swagger UI at /api/docs.
 * Its `HttpServer` stays in the output, so embedders and tests can read the bound address.
 */
export const HttpServerLive = (options: Settings) =>
  serveApi(options).pipe(
    Layer.provideMerge(announceAddress),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
