import type { HttpServer } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { Settings, SettingsOverrides } from "../domain/Settings.js"
import type { Engine } from "../runtime/Engine.js"
import type { SandboxNetwork } from "../runtime/engines/sandbox/SandboxNetwork.js"
import type { Events } from "../runtime/Events.js"
import type { MediaStore } from "../runtime/ports/MediaStore.js"
import type { GroupCommit } from "../runtime/ports/store/GroupCommit.js"
import type { ApiKeys } from "../services/ApiKeys.js"
import type { Audit } from "../services/Audit.js"
import type { Calls } from "../services/Calls.js"
import type { Channels } from "../services/Channels.js"
import type { Chats } from "../services/Chats.js"
import type { ContactProfiles } from "../services/ContactProfiles.js"
import type { Contacts } from "../services/Contacts.js"
import type { Groups } from "../services/Groups.js"
import type { Health } from "../services/Health.js"
import type { Labels } from "../services/Labels.js"
import type { Lifecycle } from "../services/Lifecycle.js"
import type { LiveEvents } from "../services/LiveEvents.js"
import type { MessageActions } from "../services/MessageActions.js"
import type { Messaging } from "../services/Messaging.js"
import type { PresenceTracker } from "../services/PresenceTracker.js"
import type { ProfileOfSession } from "../services/Profile.js"
import type { SessionSettingsStore } from "../services/SessionSettings.js"
import type { Sessions } from "../services/Sessions.js"
import type { StatusUpdates } from "../services/StatusUpdates.js"
import type { Webhooks } from "../services/Webhooks.js"
import type { SwitchboardHttpApp } from "../http/Server.js"
import { type CoreOptions, sandboxEngineLayer, SwitchboardApiApp, SwitchboardApiOnServer, SwitchboardCore, SwitchboardServer } from "./App.js"
import { defaultSettings } from "./Config.js"

/**
 * What an embedding program may use: the services of the API's use cases, the event stream
 * and shutdown. The runtime's own parts (supervisor, repositories, caches, the dispatcher…)
 * are built too, but stay out of the type: they are not a promise.
 */
export type SwitchboardServices =
  | Sessions
  | Messaging
  | MessageActions
  | StatusUpdates
  | PresenceTracker
  | Groups
  | Channels
  | Labels
  | Contacts
  | ContactProfiles
  | ProfileOfSession
  | Chats
  | Calls
  | SessionSettingsStore
  | Webhooks
  | LiveEvents
  | Events
  | ApiKeys
  | Audit
  | Health
  | Lifecycle

/** An engine for `Switchboard.layer`: the sandbox, or a layer such as `BaileysEngineLive(…)` (`/engines/baileys`). */
export type EngineChoice<E, R> = "sandbox" | Layer.Layer<Engine, E, R>

/**
 * What a Switchboard layer offers beyond `SwitchboardServices` for the engine chosen: with the
 * sandbox, its network (`SandboxNetwork`: fault injection, business accounts, its phones).
 */
export type EngineExtras<Choice> = Choice extends "sandbox" ? SandboxNetwork : never
type EngineErrorOf<Choice> = Choice extends Layer.Layer<Engine, infer E, infer _R> ? E : never
type EngineInOf<Choice> = Choice extends Layer.Layer<Engine, infer _E, infer R> ? R : never

export interface SwitchboardOptions<Choice extends EngineChoice<unknown, unknown>, StoreError, CacheError, MediaError>
  extends CoreOptions<StoreError, CacheError, MediaError>
{
  /** Where the gateway keeps its files: the SQLite database (unless `settings.databaseUrl`) and media (unless `settings.media.url` or `media`). */
  readonly dataDir?: string | undefined
  readonly engine: Choice
  /** Any other setting, over the defaults (the environment is not read: `settingsConfig` does that); a group (`media`, `security`…) names only the fields it changes. */
  readonly settings?: SettingsOverrides | undefined
}

const settingsOf = (options: { readonly dataDir?: string | undefined; readonly settings?: SettingsOverrides | undefined }) =>
  defaultSettings({ ...options.settings, ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }) })

/**
 * The engine's layer. The sandbox's other parts (its network, its call simulator) are built
 * too, for the API's sandbox routes, and its network is offered. The one cast: TypeScript does
 * not narrow the type parameter `Choice` by the comparison, so it cannot see that "sandbox" is
 * what gives `EngineExtras` and that any other choice is the engine layer itself.
 */
const engineOf = <Choice extends EngineChoice<unknown, unknown>>(engine: Choice, settings: Settings) =>
  (engine === "sandbox" ? sandboxEngineLayer(settings) : engine) as Layer.Layer<
    Engine | EngineExtras<Choice>,
    EngineErrorOf<Choice>,
    EngineInOf<Choice> | SqlClient.SqlClient | GroupCommit | MediaStore
  >

/** A layer seen through the public type: what it builds beyond `A` is not part of the promise. */
const narrowedTo = <A>() => <E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => layer

/**
 * Switchboard in one line, for an Effect program:
 *
 * - `Switchboard.layer(options)`: the sessions and their services, without HTTP;
 * - `Switchboard.serverLayer(options)`: the same plus the REST API on `settings.port` and the
 *   dashboard on `settings.dashboardPort` (0: off), as `npm start` runs them;
 * - `Switchboard.apiLayer(options)`: the same plus the REST API served on the `HttpServer` you
 *   provide, with all of its behaviour (error shapes, body caps, draining…);
 * - `Switchboard.appLayer(options)`: the same API as an `HttpApp` (`SwitchboardHttpApp`), to
 *   mount in a router of your own beside your own routes.
 *
 * `store`, `cache` and `media` layers win over the settings. Closing the scope drains first.
 * With `engine: "sandbox"` each also offers the `SandboxNetwork`.
 */
export const Switchboard = {
  layer: <Choice extends EngineChoice<unknown, unknown>, StoreError = never, CacheError = never, MediaError = never>(
    options: SwitchboardOptions<Choice, StoreError, CacheError, MediaError>
  ) =>
    Layer.unwrapEffect(Effect.map(settingsOf(options), (settings) =>
      narrowedTo<SwitchboardServices | EngineExtras<Choice>>()(SwitchboardCore(settings, engineOf(options.engine, settings), options)))),

  serverLayer: <Choice extends EngineChoice<unknown, unknown>, StoreError = never, CacheError = never, MediaError = never>(
    options: SwitchboardOptions<Choice, StoreError, CacheError, MediaError>
  ) =>
    Layer.unwrapEffect(Effect.map(settingsOf(options), (settings) =>
      narrowedTo<SwitchboardServices | EngineExtras<Choice> | HttpServer.HttpServer>()(
        SwitchboardServer(settings, engineOf(options.engine, settings), options)
      ))),

  apiLayer: <Choice extends EngineChoice<unknown, unknown>, StoreError = never, CacheError = never, MediaError = never>(
    options: SwitchboardOptions<Choice, StoreError, CacheError, MediaError>
  ) =>
    Layer.unwrapEffect(Effect.map(settingsOf(options), (settings) =>
      narrowedTo<SwitchboardServices | EngineExtras<Choice>>()(SwitchboardApiOnServer(settings, engineOf(options.engine, settings), options))))
,

  appLayer: <Choice extends EngineChoice<unknown, unknown>, StoreError = never, CacheError = never, MediaError = never>(
    options: SwitchboardOptions<Choice, StoreError, CacheError, MediaError>
  ) =>
    Layer.unwrapEffect(Effect.map(settingsOf(options), (settings) =>
      narrowedTo<SwitchboardServices | EngineExtras<Choice> | SwitchboardHttpApp>()(
        SwitchboardApiApp(settings, engineOf(options.engine, settings), options)
      )))
}
