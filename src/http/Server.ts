import { HttpApiBuilder, HttpApiSwagger, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"
import { SwitchboardApi } from "./Api.js"
import { AuthenticationLive } from "./Authentication.js"
import { ErrorResponses } from "./ErrorResponses.js"
import { HealthHandlers } from "./handlers/Health.js"
import { MessagesHandlers } from "./handlers/Messages.js"
import { SessionsHandlers } from "./handlers/Sessions.js"

/** The API with every handler; needs the services (Sessions, Messaging, ApiKeys, Health). */
export const ApiLive = HttpApiBuilder.api(SwitchboardApi).pipe(
  Layer.provide([HealthHandlers, SessionsHandlers, MessagesHandlers]),
  Layer.provide(AuthenticationLive)
)

/** The REST server on `host:port` (its `HttpServer` stays in the output, for its address), with OpenAPI at /api/openapi.json and Swagger UI at /api/docs. */
export const HttpServerLive = (options: { readonly port: number; readonly host: string }) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiSwagger.layer({ path: "/api/docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
    Layer.provide(ErrorResponses),
    Layer.provide(ApiLive),
    HttpServer.withLogAddress,
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host }))
  )
