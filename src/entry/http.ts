/**
 * `switchboard/http`: the REST API. Its contract (`SwitchboardApi`, from which `HttpApiClient`
 * derives a typed client), the layers that serve it, and `SwitchboardServer`: the core plus the
 * server, which is what `npm start` runs.
 */
export * from "../http/Api.js"
export { wireError } from "../http/wireError.js"
export { ApiLive, HttpServerLive, serveApi } from "../http/Server.js"
export { SwitchboardApiOnServer, SwitchboardServer } from "../app/App.js"
