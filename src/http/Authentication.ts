import { Effect, Layer, Redacted } from "effect"
import { ApiKeys } from "../services/ApiKeys.js"
import { Authentication } from "./Api.js"

/** `X-API-Key: <key>`, or `Authorization: Bearer <key>` for clients that only speak bearer. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const keys = yield* ApiKeys
    const check = (key: Redacted.Redacted) => keys.authenticate(Redacted.value(key))
    return Authentication.of({ apiKey: check, bearer: check })
  })
)
