import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { CurrentPrincipal } from "../domain/Principal.js"
import { Forbidden, RateLimited, Unauthorized } from "../domain/Errors.js"
import { wireError } from "./wireError.js"

/**
 * The API's authentication, as the contract declares it: a key in `X-API-Key` or as a bearer
 * token, refused with 401, 403 or 429, giving the handler its `CurrentPrincipal`. What it does
 * is `AuthenticationLive`'s; this side is all a client of the contract loads.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(wireError(Unauthorized), wireError(Forbidden), wireError(RateLimited)),
  provides: CurrentPrincipal,
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "X-API-Key", in: "header" }),
    bearer: HttpApiSecurity.bearer
  }
}) {}
