import { Etag, FileSystem, HttpPlatform, type HttpRouter, HttpServer, Path } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { AppSettings } from "../domain/Settings.js"
import { Engine } from "../runtime/Engine.js"
import { Metrics } from "../runtime/Metrics.js"
import { Cache } from "../runtime/ports/Cache.js"
import { ApiKeys } from "../services/ApiKeys.js"
import { Audit } from "../services/Audit.js"
import { Calls } from "../services/Calls.js"
import { Channels } from "../services/Channels.js"
import { Chats } from "../services/Chats.js"
import { ContactProfiles } from "../services/ContactProfiles.js"
import { Contacts } from "../services/Contacts.js"
import { Groups } from "../services/Groups.js"
import { Health } from "../services/Health.js"
import { Labels } from "../services/Labels.js"
import { Lifecycle } from "../services/Lifecycle.js"
import { LiveEvents } from "../services/LiveEvents.js"
import { MessageActions } from "../services/MessageActions.js"
import { Messaging } from "../services/Messaging.js"
import { OutboundBacklog } from "../services/outboundBacklog.js"
import { PresenceTracker } from "../services/PresenceTracker.js"
import { ProfileOfSession } from "../services/Profile.js"
import { SandboxCalls } from "../services/SandboxCalls.js"
import { SessionSettingsStore } from "../services/SessionSettings.js"
import { Sessions } from "../services/Sessions.js"
import { StatusUpdates } from "../services/StatusUpdates.js"
import { Webhooks } from "../services/Webhooks.js"

/**
 * The services the API's handlers and middleware read, and the server it is served on.
 * `onlyApiServices` checks the list against what the API's layers require: one missing fails
 * the type check (one no longer needed does not).
 */
const requiredServices = [
  AppSettings,
  ApiKeys,
  Audit,
  Cache,
  Calls,
  Channels,
  Chats,
  ContactProfiles,
  Contacts,
  Engine,
  Groups,
  Health,
  HttpServer.HttpServer,
  Labels,
  Lifecycle,
  LiveEvents,
  MessageActions,
  Messaging,
  Metrics,
  OutboundBacklog,
  PresenceTracker,
  ProfileOfSession,
  SandboxCalls,
  SessionSettingsStore,
  Sessions,
  StatusUpdates,
  Webhooks
] as const

/**
 * The platform's `HttpRouter.DefaultServices`, which endpoint types leave out: read at run time
 * all the same (a multipart body is parsed through the FileSystem and Path; a file answer, none
 * today, would go through the HttpPlatform). The core (`NodeContext`) or the server supplies them.
 */
const platformServices = [Etag.Generator, FileSystem.FileSystem, HttpPlatform.HttpPlatform, Path.Path] as const
// Fails to compile should the platform's default services change.
const sameAsThePlatforms: [HttpRouter.HttpRouter.DefaultServices] extends [Context.Tag.Identifier<typeof platformServices[number]>] ? true : never = true
void sameAsThePlatforms

const keptServices = [...requiredServices, ...platformServices]

type RequiredService = Context.Tag.Identifier<typeof requiredServices[number]>

/**
 * Builds the API's layers with only `keptServices` in their context, not the whole gateway's
 * (~70 services: every repository, the engine's parts, the caches). The platform copies the
 * context a request runs with several times a request (the router's per-request context, the
 * handler group's context merged with the request's, each service a middleware provides): ~6
 * copies of ~70 entries, ~3.6 µs and ~7 KB each, the largest part of what a send allocates
 * (bench/README.md, "Ninth round"). Anything else an embedder put in the context (a
 * `Context.Reference` setting, a parent span) is not seen by the API. Built in a memo map of
 * their own: none of these layers is shared with the core.
 */
export const onlyApiServices = <A, E, R extends RequiredService>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.scopedContext(Effect.flatMap(Effect.scope, (scope) =>
    // The layer's context is replaced by the picked one, not merged into the whole. The cast:
    // `pick` types its result as the whole's, and R is within what it keeps (the constraint).
    Effect.mapInputContext(Layer.buildWithScope(layer, scope), (all: Context.Context<R>) => Context.pick(...keptServices)(all) as Context.Context<R>)))
