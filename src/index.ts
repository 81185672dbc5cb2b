/**
 * Switchboard as a library: the service tags, schemas and errors, the REST contract, and the
 * layers to compose. See README "Embedding" for a complete program.
 */
export * from "./http/Api.js"
export { ApiLive, HttpServerLive } from "./http/Server.js"
export * from "./layers/App.js"
export { AppSettings, defaultSettings, type Settings, settingsConfig } from "./layers/Config.js"
export * from "./runtime/Engine.js"
export { SandboxEngineLive } from "./runtime/engines/sandbox/SandboxEngine.js"
export { SandboxNetwork } from "./runtime/engines/sandbox/SandboxNetwork.js"
export { reconnectSchedule, type ReconnectSettings } from "./runtime/ReconnectPolicy.js"
export type { ActorState } from "./runtime/SessionActor.js"
export { SessionSupervisor, type SessionSupervisorService } from "./runtime/SessionSupervisor.js"
export { ApiKeys, CurrentPrincipal, type Principal, type Role } from "./services/ApiKeys.js"
export * from "./services/Errors.js"
export * from "./services/Events.js"
export { Health } from "./services/Health.js"
export * from "./services/Ids.js"
export * from "./services/Message.js"
export { Messaging, type MessagingService } from "./services/Messaging.js"
export * from "./services/Pagination.js"
export * from "./services/Session.js"
export { Sessions, type SessionsService } from "./services/Sessions.js"
