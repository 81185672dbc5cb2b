import { mediaStoreFromSettings } from "../layers/media/mediaStoreLayers.js"
import { cacheFromSettings } from "../layers/cache/cacheLayers.js"
import { NodeContext } from "@effect/platform-node"
import type { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Option } from "effect"
import { DashboardServerLive } from "../http/Dashboard.js"
import { apiAppLayer, HttpServerLive, serveApi } from "../http/Server.js"
import { Engine } from "../runtime/Engine.js"
import { SandboxCallSimulator, SandboxEngineLive } from "../runtime/engines/sandbox/SandboxEngine.js"
import { SandboxNetwork } from "../runtime/engines/sandbox/SandboxNetwork.js"
import { Lifecycle } from "../services/Lifecycle.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { ApiKeys } from "../services/ApiKeys.js"
import { Audit } from "../services/Audit.js"
import { Channels } from "../services/Channels.js"
import { Chats } from "../services/Chats.js"
import { Contacts } from "../services/Contacts.js"
import { ContactProfiles } from "../services/ContactProfiles.js"
import { ProfileOfSession } from "../services/Profile.js"
import { Groups } from "../services/Groups.js"
import { Labels } from "../services/Labels.js"
import { LiveEvents } from "../services/LiveEvents.js"
import { Webhooks } from "../services/Webhooks.js"
import { Health } from "../services/Health.js"
import { MediaIntake } from "../services/MediaIntake.js"
import { Metrics } from "../runtime/Metrics.js"
import { Messaging } from "../services/Messaging.js"
import { OutboundBacklog } from "../services/outboundBacklog.js"
import { MessageActions } from "../services/MessageActions.js"
import { PresenceTracker } from "../services/PresenceTracker.js"
import { Sessions } from "../services/Sessions.js"
import { Calls } from "../services/Calls.js"
import { SandboxCalls } from "../services/SandboxCalls.js"
import { SessionSettingsStore } from "../services/SessionSettings.js"
import { StatusUpdates } from "../services/StatusUpdates.js"
import { AppSettings, type Settings } from "../domain/Settings.js"
import { MediaStore } from "../runtime/ports/MediaStore.js"
import type { GroupCommit } from "../runtime/ports/store/GroupCommit.js"
import type { Cache } from "../runtime/ports/Cache.js"
import { LinkPreviews } from "../runtime/LinkPreviews.js"
import { RepositoriesLive, SqlSandboxLedger, storeLayerFromUrl } from "../layers/store/index.js"
import { topologyFromSettings } from "./Topology.js"

/**
 * The sandbox network and its engine; the network stays visible for fault injection. Its
 * memory is kept in the Store, so held messages survive a restart.
 */
export const sandboxEngineLayer = (settings: Settings) =>
  Layer.merge(SandboxEngineLive, SandboxCallSimulator).pipe(
    Layer.provideMerge(SandboxNetwork.layer({ pairDelay: settings.sandboxPairDelay, businessByDefault: settings.sandboxBusiness })),
    Layer.provide(SqlSandboxLedger)
  )

/**
 * The engine named by `ENGINE`. Baileys (and the WhatsApp protocol it brings) is loaded only
 * when it is the one: loading it costs a sandbox gateway a good part of its start.
 */
export const engineFromSettings = (settings: Settings): Layer.Layer<Engine, never, SqlClient.SqlClient | GroupCommit | MediaStore> =>
  settings.engine === "sandbox"
    ? sandboxEngineLayer(settings)
    : Layer.unwrapEffect(Effect.gen(function*() {
      const { BaileysEngineLive } = yield* Effect.promise(() => import("../runtime/engines/baileys/BaileysEngine.js"))
      const { fetchWaVersion } = yield* Effect.promise(() => import("../runtime/engines/baileys/waVersion.js"))
      // WA_VERSION wins; else WA_VERSION_URL, read once now; else Baileys' own.
      const waVersion = Option.isSome(settings.waVersion) || Option.isNone(settings.waVersionUrl)
        ? settings.waVersion
        : yield* fetchWaVersion(settings.waVersionUrl.value)
      return BaileysEngineLive({
        waWebSocketUrl: Option.getOrUndefined(settings.waWebSocketUrl),
        waVersion: Option.getOrUndefined(waVersion),
        keepAliveIntervalMs: Duration.toMillis(settings.waKeepAliveInterval)
      })
    }))

/** The Store chosen by `DATABASE_URL`, with its repositories. */
export const storeFromSettings = (settings: Settings) => storeOfDatabase(settings.databaseUrl)

/**
 * The Store of a database URL (`sqlite:<path>` or `postgres://…`), migrated, with its
 * repositories: what `CoreOptions.store` takes. `pg` is loaded only for a Postgres URL.
 */
export const storeOfDatabase = (databaseUrl: string) => RepositoriesLive.pipe(Layer.provideMerge(storeLayerFromUrl(databaseUrl)))

/** What a Store layer provides: the transactions, every repository, and the `SqlClient` under them. */
export type StoreServices = Layer.Layer.Success<ReturnType<typeof storeFromSettings>>

/**
 * What an embedder (or a test) may put in place of the gateway's own parts. A layer given here
 * wins over the settings: with `media`, `MEDIA_URL` is not read, and so on.
 */
export interface CoreOptions<StoreError = never, CacheError = never, MediaError = never> {
  /** The Store and its repositories; by default the database of `databaseUrl` (`storeFromSettings`). */
  readonly store?: Layer.Layer<StoreServices, StoreError> | undefined
  /** The cache and shared limits; by default the one of `cacheUrl` (`cacheFromSettings`). */
  readonly cache?: Layer.Layer<Cache, CacheError> | undefined
  /** Where media bytes are kept; by default the one of `media.url` (`mediaStoreFromSettings`). */
  readonly media?: Layer.Layer<MediaStore, MediaError> | undefined
  /** How texts get their link previews; by default fetched by the gateway (`LinkPreviews.layer`). */
  readonly linkPreviews?: Layer.Layer<LinkPreviews> | undefined
  /**
   * Whether building the core restores the sessions that were running (default true). The
   * server says false: it restores them in the background once it listens.
   */
  readonly restoreSessions?: boolean | undefined
}

/**
 * Switchboard without HTTP: the session runtime and its services, for embedding in another
 * Effect program. Restores the sessions that were running; closing its scope drains first
 * (`Lifecycle`: queued sends go out, within `shutdownTimeout`).
 */
export const SwitchboardCore = <EngineOut, E, R, StoreError = never, CacheError = never, MediaError = never>(
  settings: Settings,
  engine: Layer.Layer<Engine | EngineOut, E, R>,
  options: CoreOptions<StoreError, CacheError, MediaError> = {}
) => {
  const topology = topologyFromSettings(settings)
  const store: Layer.Layer<StoreServices, StoreError | Layer.Layer.Error<ReturnType<typeof storeFromSettings>>> = options.store ??
    storeFromSettings(settings)
  const base = Layer.mergeAll(
    Layer.merge(topology.events, topology.cachedCopies).pipe(Layer.provideMerge(store)),
    options.media ?? mediaStoreFromSettings(settings),
    options.cache ?? cacheFromSettings(settings),
    AppSettings.layer(settings),
    options.linkPreviews ?? LinkPreviews.layer.pipe(Layer.provide(AppSettings.layer(settings))),
    NodeContext.layer
  )
  const runtime = topology.supervisor.pipe(Layer.provideMerge(engine), Layer.provideMerge(base))
  const services = Layer.mergeAll(
    Sessions.layer,
    PresenceTracker.layer,
    Groups.layer,
    Channels.layer,
    Labels.layer,
    Contacts.layer,
    Chats.layer,
    ContactProfiles.layer,
    ProfileOfSession.layer,
    Webhooks.layer,
    LiveEvents.layer,
    ApiKeys.layer,
    Audit.layer,
    Health.layer,
    SessionSettingsStore.layer,
    Calls.layer,
    SandboxCalls.layer
  ).pipe(
    // Status updates post through Messaging and delete through MessageActions.
    Layer.provideMerge(StatusUpdates.layer),
    Layer.provideMerge(Layer.merge(Messaging.layer, MessageActions.layer)),
    Layer.provideMerge(MediaIntake.layer),
    Layer.provideMerge(OutboundBacklog.layer),
    Layer.provideMerge(topology.dispatcher),
    Layer.provideMerge(Metrics.layer),
    Layer.provideMerge(runtime)
  )
  const restore = options.restoreSessions === false
    ? Layer.empty
    : Layer.effectDiscard(Effect.flatMap(SessionSupervisor, (supervisor) => supervisor.restore))
  // Acquired after the services, so closing the scope drains before any of them stops.
  const lifecycle = Lifecycle.layer({ shutdownTimeout: settings.shutdownTimeout })
  return restore.pipe(Layer.provideMerge(lifecycle), Layer.provideMerge(services))
}

/**
 * Restores the sessions that were running, once the servers listen: with thousands of them the
 * API answers (health, reads, sends that wait for their session) from the first seconds, and
 * health shows how many are still to come.
 */
const restoreInBackground = Layer.scopedDiscard(
  Effect.flatMap(SessionSupervisor, (supervisor) =>
    supervisor.restore.pipe(
      Effect.catchAllCause((cause) => Effect.logError("the sessions that were running could not all be restored", cause)),
      Effect.forkScoped
    ))
)

/** The whole gateway: the core plus the REST server, with its admin key bootstrapped. */
export const SwitchboardServer = <EngineOut, E, R, StoreError = never, CacheError = never, MediaError = never>(
  settings: Settings,
  engine: Layer.Layer<Engine | EngineOut, E, R>,
  options: CoreOptions<StoreError, CacheError, MediaError> = {}
) => servedWith(settings, engine, options, DashboardServerLive(settings).pipe(Layer.provideMerge(HttpServerLive(settings))))

/**
 * The core plus the REST API served on the `HttpServer` the embedder provides (its own port,
 * its own server), with the same behaviour as the gateway's own server (`serveApi`). No
 * dashboard: that is a server of its own.
 */
export const SwitchboardApiOnServer = <EngineOut, E, R, StoreError = never, CacheError = never, MediaError = never>(
  settings: Settings,
  engine: Layer.Layer<Engine | EngineOut, E, R>,
  options: CoreOptions<StoreError, CacheError, MediaError> = {}
) => servedWith(settings, engine, options, serveApi(settings))

/**
 * The core plus the REST API as an `HttpApp` (`SwitchboardHttpApp`), for the embedder to mount
 * in a router or server of its own, beside its own routes; the same behaviour as `serveApi`.
 */
export const SwitchboardApiApp = <EngineOut, E, R, StoreError = never, CacheError = never, MediaError = never>(
  settings: Settings,
  engine: Layer.Layer<Engine | EngineOut, E, R>,
  options: CoreOptions<StoreError, CacheError, MediaError> = {}
) => servedWith(settings, engine, options, apiAppLayer(settings))

/** The core, with its admin key bootstrapped, under `http`; draining and restoring ordered around it. */
const servedWith = <EngineOut, E, R, StoreError, CacheError, MediaError, HttpOut, HttpError, HttpIn>(
  settings: Settings,
  engine: Layer.Layer<Engine | EngineOut, E, R>,
  options: CoreOptions<StoreError, CacheError, MediaError>,
  http: Layer.Layer<HttpOut, HttpError, HttpIn>
) => {
  const bootstrapKey = Layer.effectDiscard(Effect.flatMap(ApiKeys, (keys) => keys.bootstrap))
  // Acquired after the server, so the drain runs while the server still answers (503s, health).
  const served = Lifecycle.drainOnClose.pipe(
    Layer.provideMerge(http),
    Layer.provideMerge(bootstrapKey),
    Layer.provideMerge(SwitchboardCore(settings, engine, { ...options, restoreSessions: false }))
  )
  // Last of all: the restore starts once everything listens, and a shutdown stops it first.
  return restoreInBackground.pipe(Layer.provideMerge(served))
}
