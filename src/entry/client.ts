/**
 * `switchboard/client`: what a program that calls a running gateway needs, without the gateway.
 * `HttpApiClient.make(SwitchboardApi, { baseUrl })` (from `@effect/platform`) is the typed client.
 */
export { SwitchboardApi } from "../http/Api.js"
