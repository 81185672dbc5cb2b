/**
 * `switchboard/client`: what a program that calls a running gateway needs, without the gateway:
 * `SwitchboardClient.layer({ baseUrl, apiKey })`, the typed client derived from the contract
 * (`HttpApiClient.make(SwitchboardApi, …)`), and the errors it can fail with.
 */
export { SwitchboardClient, type SwitchboardClientOptions, type SwitchboardClientService } from "../http/client/SwitchboardClient.js"
export { SwitchboardApi } from "../http/Api.js"
export * from "../domain/Errors.js"
