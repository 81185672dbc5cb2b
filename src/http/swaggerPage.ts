import { type HttpApi, HttpApiSwagger, HttpLayerRouter } from "@effect/platform"

/**
 * The Swagger UI page of `api` at `path`, as `HttpApiSwagger` makes it, served by a router of
 * its own: loaded (with its 2 MB of script) by the first request for it (see `ApiDocuments.ts`).
 */
export const swaggerPage = (api: HttpApi.HttpApi.Any, path: `/${string}`) =>
  HttpLayerRouter.toHttpEffect(HttpApiSwagger.layerHttpLayerRouter({ api, path }))
