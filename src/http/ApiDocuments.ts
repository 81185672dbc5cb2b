import { HttpApi, HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, Scope } from "effect"

/**
 * The API's OpenAPI document (`/api/openapi.json`) and its Swagger UI (`/api/docs`), each made
 * at its first request and kept. `HttpApiBuilder.middlewareOpenApi` and `HttpApiSwagger.layer`
 * make them while the server starts: the same document twice (~85 ms of CPU before the API
 * answers its first request) and the Swagger UI's 2 MB of script loaded by every start. The
 * document is the same; the page is `HttpApiSwagger`'s own (see `swaggerPage.ts`).
 */
export const ApiDocumentsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const { api } = yield* HttpApi.Api
    const scope = yield* Effect.scope
    const document = yield* Effect.cached(Effect.suspend(() => HttpServerResponse.json(OpenApi.fromApi(api))).pipe(Effect.orDie))
    yield* router.get("/api/openapi.json", document)
    const page = yield* Effect.cached(
      Effect.promise(() => import("./swaggerPage.js")).pipe(
        Effect.flatMap(({ swaggerPage }) => swaggerPage(api, "/api/docs")),
        Scope.extend(scope)
      )
    )
    yield* router.get("/api/docs", Effect.flatten(page))
  })
)
