import { type HttpApi, HttpLayerRouter } from "@effect/platform"
// By its own path, not from the package's index: see scripts/bundle.mjs (on-demand-modules-out-of-indexes).
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"

/**
 * The Swagger UI page of `api` at `path`, as `HttpApiSwagger` makes it, served by a router of
 * its own: loaded (with its 2 MB of script) by the first request for it (see `ApiDocuments.ts`).
 */
export const swaggerPage = (api: HttpApi.HttpApi.Any, path: `/${string}`) =>
  HttpLayerRouter.toHttpEffect(HttpApiSwagger.layerHttpLayerRouter({ api, path }))
