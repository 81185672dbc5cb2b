import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Effect, Layer, Redacted } from "effect"
import { SwitchboardApi } from "../Api.js"

export interface SwitchboardClientOptions {
  /** Where the gateway answers, without `/api`: e.g. `http://127.0.0.1:2785`. */
  readonly baseUrl: string | URL
  /** The key every request is sent with (`x-api-key`); a `Redacted` one stays out of logs. */
  readonly apiKey: string | Redacted.Redacted<string>
}

/** A typed client of the REST API, derived from the contract: one method per operation, grouped as the API is. */
const makeClient = ({ apiKey, baseUrl }: SwitchboardClientOptions) =>
  HttpApiClient.make(SwitchboardApi, {
    baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", Redacted.isRedacted(apiKey) ? Redacted.value(apiKey) : apiKey))
  })

export type SwitchboardClientService = Effect.Effect.Success<ReturnType<typeof makeClient>>

/**
 * The gateway over HTTP, as a service: `client.sessions.create({ payload: { name } })`, and so
 * on for every operation of `SwitchboardApi`. Each answer is decoded by the contract's schemas,
 * and each refusal arrives as the contract's typed error (`NotFound`, `Forbidden`, …). Needs an
 * `HttpClient` (e.g. `FetchHttpClient.layer` or `NodeHttpClient.layer`).
 */
export class SwitchboardClient extends Context.Tag("switchboard/SwitchboardClient")<SwitchboardClient, SwitchboardClientService>() {
  static readonly layer = (options: SwitchboardClientOptions): Layer.Layer<SwitchboardClient, never, HttpClient.HttpClient> =>
    Layer.effect(SwitchboardClient, makeClient(options))
}
