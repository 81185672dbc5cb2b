import {
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { RpcSerialization } from "@effect/rpc"
import { Duration, Layer, Option } from "effect"
import { ClusterCachedCopiesLive } from "../runtime/cluster/ClusterCachedCopies.js"
import { ClusterEventsLive } from "../runtime/cluster/ClusterEvents.js"
import { ClusterSupervisorLive } from "../runtime/cluster/ClusterSupervisor.js"
import { ReconcilerLive } from "../runtime/cluster/Reconciler.js"
import { LocalSupervisor, SessionEntityLive } from "../runtime/cluster/SessionEntity.js"
import { ClusterWebhookDispatcherLive } from "../runtime/cluster/WebhookOutboxEntity.js"
import type { ActorSettings } from "../runtime/SessionActor.js"
import { makeSessionSupervisor, SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { defaultDispatcherOptions, WebhookDispatcher } from "../runtime/webhooks/Dispatcher.js"
import { CachedCopies } from "../runtime/CachedCopies.js"
import { Events } from "../runtime/Events.js"
import type { ClusterSettings, Settings } from "../domain/Settings.js"

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
  // One runner per process; built once (layers are shared by reference) for both users.
  const sharding = shardingLayer(settings.cluster)
  const local = Layer.scoped(LocalSupervisor, makeSessionSupervisor(actorSettings))
  return {
    events: ClusterEventsLive,
    cachedCopies: ClusterCachedCopiesLive,
    supervisor: Layer.mergeAll(ClusterSupervisorLive, SessionEntityLive, ReconcilerLive).pipe(
      Layer.provide(local),
      Layer.provide(sharding)
    ),
    dispatcher: ClusterWebhookDispatcherLive(defaultDispatcherOptions).pipe(Layer.provide(sharding))
  }
}

/**
 * Failover timing. A runner that stops answering is marked unhealthy after a health check
 * (5 pings, 500 ms apart, every 3 s) and its shards go to the others. If the dead runner was
 * the one running the health checks, its shards go when its lock heartbeat expires (the
 * library's 35 s: a shorter expiry shortens the heartbeat's own timeout, and on a loaded
 * machine a runner then drops its shards by mistake). A session it hosted is started by its
 * new runner from the keep-alive message found in storage (polled every second) or by the
 * next reconcile pass (every 5 s).
 */
const failover = {
  runnerHealthCheckInterval: Duration.seconds(3),
  entityMessagePollInterval: Duration.seconds(1),
  refreshAssignmentsInterval: Duration.seconds(1)
}

/**
 * This process as a runner: socket transport between runners (msgpack), runner registry and
 * message storage in the Store's Postgres, health checked by ping. Assembled here rather than
 * with `NodeClusterSocket.layer`, which reads `HOST` and `PORT` from the environment, the
 * names of the API's own address.
 */
const shardingLayer = (cluster: ClusterSettings) => {
  const address = RunnerAddress.make(cluster.host, cluster.port)
  const config = ShardingConfig.layer({
    ...failover,
    runnerAddress: Option.some(address),
    runnerListenAddress: Option.some(RunnerAddress.make(Option.getOrElse(cluster.listenHost, () => cluster.host), cluster.port))
  })
  const health = RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(NodeClusterSocket.layerClientProtocol))
  return SocketRunner.layer.pipe(
    Layer.provide([NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]),
    Layer.provide(health),
    Layer.provide(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
    Layer.provide(config),
    Layer.provide(RpcSerialization.layerMsgPack),
    Layer.orDie
  )
}
