/**
 * `switchboard/http`: the REST API. Its contract (`SwitchboardApi`, from which `HttpApiClient`
 * derives a typed client), the layers that serve it, and `SwitchboardServer`: the core plus the
 * server, which is what `npm start` runs.
 */
export * from "../http/Api.js"
export { wireError } from "../http/wireError.js"
// Not `ApiLive`: the routes without their middleware (error shapes, body caps, drain) would
// answer a bad body with `{"issues": …}`, quoting the input. `serveApi` is the API whole.
export { apiAppLayer, HttpServerLive, serveApi, serveWithSwitchboardApi, SwitchboardHttpApp } from "../http/Server.js"
export { SwitchboardApiApp, SwitchboardApiOnServer, SwitchboardServer } from "../app/App.js"
