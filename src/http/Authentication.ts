import { Headers, HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { ApiKeys, CurrentPrincipal } from "../services/ApiKeys.js"
import { Unauthorized, wireError } from "../services/Errors.js"

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: wireError(Unauthorized),
  provides: CurrentPrincipal,
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" }),
    bearer: HttpApiSecurity.bearer
  }
}) {}

/** `X-API-Key: <key>`, or else `Authorization: Bearer <key>`; empty when neither is sent. */
export const credentialOf = (request: HttpServerRequest.HttpServerRequest) =>
  Option.getOrElse(
    Option.orElse(
      Headers.get(request.headers, "x-api-key"),
      () => Option.map(Headers.get(request.headers, "authorization"), (value) => value.replace(/^Bearer\s+/i, ""))
    ),
    () => ""
  ).trim()

/**
 * Both schemes of the contract (they document the two headers in OpenAPI) authenticate the
 * same credential, read from the request: HttpApi tries them in turn and reports the last
 * failure, which would otherwise replace "this key was revoked" by "no key was sent".
 */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const check = () =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => keys.authenticate(credentialOf(request)))
    return Authentication.of({ apiKey: check, bearer: check })
  })
)
