import { HttpApi, HttpRouter, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, FiberRef, Option } from "effect"
import type { Role } from "../domain/ApiKey.js"

/**
 * The role an endpoint needs, declared beside it in the contract:
 * `.annotate(RequiredRole, "operator")`. Authentication refuses keys whose role does not cover it.
 */
export class RequiredRole extends Context.Tag("switchboard/RequiredRole")<RequiredRole, Role>() {}

/** One endpoint of the contract, as the request's wrappers need to know it. */
export interface Endpoint {
  readonly group: string
  readonly name: string
  readonly method: string
  /** The route pattern, prefix included (`/api/sessions/:sessionId`). */
  readonly path: string
  readonly authenticated: boolean
  /** What the contract declares; absent on the endpoints that need no key. */
  readonly requiredRole: Role | undefined
}

/** Every endpoint of `api`, read from its declaration, so a new one is never missed. */
export const endpointsOf = (api: HttpApi.HttpApi.Any): ReadonlyArray<Endpoint> => {
  const found: Array<Endpoint> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      found.push({
        group: group.identifier,
        name: endpoint.name,
        method: endpoint.method,
        path: endpoint.path,
        authenticated: middleware.size > 0,
        requiredRole: Option.getOrUndefined(Context.getOption(mergedAnnotations, RequiredRole))
      })
    }
  })
  return found
}

/** Wraps a route's handler, inside the router (`HttpRouter.use`), where `HttpRouter.RouteContext` is known. */
export type RouteWrapper = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpRouter.HttpRouter.Provided>

/** The endpoint a route of the router stands for, found by the route's own method and pattern. */
export const endpointOfRoute = (endpoints: ReadonlyArray<Endpoint>) => {
  const byRoute = new Map(endpoints.map((endpoint) => [`${endpoint.method} ${endpoint.path}`, endpoint]))
  return (route: HttpRouter.Route<unknown, unknown>): Endpoint | undefined => byRoute.get(`${route.method} ${route.path}`)
}

/** The endpoint the router matched, with the path parameters it read. */
export interface MatchedEndpoint {
  readonly endpoint: Endpoint
  readonly params: Readonly<Record<string, string | undefined>>
}

/**
 * Which endpoint is answering the request. Set inside the router, where the route is known
 * (`Server.ts` wraps every route), and read by what wraps the whole API (the audit log, the
 * metrics, the access log), which runs before routing and looks only once the answer is made.
 * None for a request no route took (404, CORS preflight).
 */
export const matchedEndpoint: FiberRef.FiberRef<Option.Option<MatchedEndpoint>> = FiberRef.unsafeMake(Option.none())

/**
 * Wraps a route's handler (`HttpRouter.use`) to report its endpoint in `matchedEndpoint`, from
 * the router's own `RouteContext`: the route it matched and the parameters it read. Routes that
 * are no endpoint of the contract (the Swagger UI's) report none.
 */
export const reportMatchedEndpoint = (endpoints: ReadonlyArray<Endpoint>) => {
  const endpointOf = endpointOfRoute(endpoints)
  return <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.flatMap(HttpRouter.RouteContext, ({ params, route }) => {
      const endpoint = endpointOf(route)
      return endpoint === undefined ? handler : Effect.zipRight(FiberRef.set(matchedEndpoint, Option.some({ endpoint, params })), handler)
    })
}

/**
 * Reports in `matchedEndpoint` the endpoint a request is for, without answering it (see
 * `endpointLookup`). For the refusals made before routing (ALLOWED_CIDRS, the drain): their
 * answers are the same on every path, but their audit record, metrics and access line name the
 * endpoint the request was for, as those of any other answer do.
 */
export type EndpointLookup = Effect.Effect<void, never, HttpServerRequest.HttpServerRequest>

/**
 * The router's own match, run on a copy of `routes` whose handlers only report their endpoint
 * (`report`, i.e. `reportMatchedEndpoint`): nothing is authenticated, read or answered, and
 * there is no second path matcher to disagree with the router.
 */
export const endpointLookup = (
  routes: HttpRouter.HttpRouter<unknown, unknown>,
  report: RouteWrapper
): Effect.Effect<EndpointLookup> =>
  Effect.map(
    HttpRouter.toHttpApp(HttpRouter.use(routes, () => report(Effect.succeed(HttpServerResponse.empty())))),
    // a request no route takes (RouteNotFound) reports none
    Effect.ignore
  )
