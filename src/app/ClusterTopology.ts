import {
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
// By its own path, not from the package's index: see scripts/bundle.mjs (on-demand-modules-out-of-indexes).
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import { RpcSerialization } from "@effect/rpc"
import { Duration, Layer, Option } from "effect"
import { ClusterCachedCopiesLive } from "../runtime/cluster/ClusterCachedCopies.js"
import { ClusterEventsLive } from "../runtime/cluster/ClusterEvents.js"
import { ClusterSupervisorLive } from "../runtime/cluster/ClusterSupervisor.js"
import { ReconcilerLive } from "../runtime/cluster/Reconciler.js"
import { RunnerLivenessLive } from "../runtime/cluster/RunnerLiveness.js"
import { LocalSupervisor, SessionEntityLive } from "../runtime/cluster/SessionEntity.js"
import { ClusterWebhookDispatcherLive } from "../runtime/cluster/WebhookOutboxEntity.js"
import type { ActorSettings } from "../runtime/SessionActor.js"
import { makeSessionSupervisor } from "../runtime/SessionSupervisor.js"
import { defaultDispatcherOptions } from "../runtime/webhooks/Dispatcher.js"
import type { ClusterSettings } from "../domain/Settings.js"

/** The cluster's layers of the topology (see `Topology.ts`): one runner per process. */
export const clusterTopology = (cluster: ClusterSettings, actorSettings: ActorSettings) => {
  // One runner per process; built once (layers are shared by reference) for both users.
  const sharding = shardingLayer(cluster)
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
 * Failover timing. A runner whose process dies is found within about a second by every other
 * runner (`RunnerLiveness`: its Postgres liveness lock is freed and its port refuses
 * connections) and marked unhealthy; the others see it at their next assignment refresh (every
 * second) and take its shards, whose advisory locks Postgres freed with its connection. A runner
 * that stops answering while its process lives is marked unhealthy by the library's health check
 * (5 pings, 500 ms apart, every 3 s), and one nobody checks loses its shards when its lock
 * heartbeat expires (the library's 35 s, kept: a shorter expiry shortens the heartbeat's own
 * timeout, and on a loaded machine a runner then drops its shards by mistake). A session it
 * hosted is started by its new runner from the keep-alive message found in storage (polled every
 * second) or by the next reconcile pass (every 5 s).
 */
const failover = {
  runnerHealthCheckInterval: Duration.seconds(3),
  entityMessagePollInterval: Duration.seconds(1),
  refreshAssignmentsInterval: Duration.seconds(1)
}

/**
 * This process as a runner: socket transport between runners (msgpack), runner registry and
 * message storage in the Store's Postgres, health checked by ping and by `RunnerLiveness`.
 * Assembled here rather than with `NodeClusterSocket.layer`, which reads `HOST` and `PORT` from
 * the environment, the names of the API's own address.
 */
const shardingLayer = (cluster: ClusterSettings) => {
  const address = RunnerAddress.make(cluster.host, cluster.port)
  const config = ShardingConfig.layer({
    ...failover,
    runnerAddress: Option.some(address),
    runnerListenAddress: Option.some(RunnerAddress.make(Option.getOrElse(cluster.listenHost, () => cluster.host), cluster.port))
  })
  const health = RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(NodeClusterSocket.layerClientProtocol))
  const runner = SocketRunner.layer.pipe(
    Layer.provide([NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol]),
    Layer.provide(health),
    Layer.provide(Layer.orDie(SqlMessageStorage.layer)),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layer)),
    Layer.provide(config),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
  return Layer.merge(runner, RunnerLivenessLive(`${address.host}:${address.port}`)).pipe(Layer.orDie)
}
