import { Effect, Layer } from "effect"
import type { ActorSettings } from "../runtime/SessionActor.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { WebhookDispatcher } from "../runtime/webhooks/Dispatcher.js"
import { CachedCopies } from "../runtime/CachedCopies.js"
import { Events } from "../runtime/Events.js"
import type { Settings } from "../domain/Settings.js"

/** A layer from a module loaded when the layer is built. */
const layerWhenLoaded = <A, E, R>(load: () => Promise<Layer.Layer<A, E, R>>) => Layer.unwrapEffect(Effect.promise(load))

/**
 * How the gateway's processes are arranged, picked by `CLUSTER`: the layers that differ
 * between one process and a cluster. Everything above them (the HTTP API, the services, the
 * webhooks' API) is the same either way.
 *
 * - `off`: the supervisor runs every session's actor in this process; events go over an
 *   in-process bus; this process dispatches the webhook outbox; its caches are its own.
 * - `on`: sessions are `Session` entities of @effect/cluster, sharded over the runners that
 *   share the Postgres Store; the supervisor sends each command to the session's entity
 *   wherever it lives; events reach every runner through Postgres notifications; the webhook
 *   outbox has one dispatcher entity in the whole cluster; a key changed on one runner is
 *   forgotten by every runner's lookup cache at once.
 */
export const topologyFromSettings = (settings: Settings) => {
  const actorSettings: ActorSettings = {
    reconnect: settings.reconnect,
    pacing: settings.pacing,
    media: { incoming: settings.media.incoming, maxBytes: settings.media.maxBytes, keepRevoked: settings.media.keepRevoked }
  }
  if (!settings.cluster.enabled) {
    return {
      events: Events.layer,
      cachedCopies: CachedCopies.singleProcess,
      supervisor: SessionSupervisor.layer(actorSettings),
      dispatcher: WebhookDispatcher.layer()
    }
  }
  // Loaded only in cluster mode: @effect/cluster, its RPC and msgpack cost every other
  // gateway's start-up ~150 ms. One load (and one sharding layer) for the four layers.
  const cluster = import("./ClusterTopology.js").then(({ clusterTopology }) => clusterTopology(settings.cluster, actorSettings))
  return {
    events: layerWhenLoaded(() => cluster.then((topology) => topology.events)),
    cachedCopies: layerWhenLoaded(() => cluster.then((topology) => topology.cachedCopies)),
    supervisor: layerWhenLoaded(() => cluster.then((topology) => topology.supervisor)),
    dispatcher: layerWhenLoaded(() => cluster.then((topology) => topology.dispatcher))
  }
}

