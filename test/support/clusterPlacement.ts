import { RunnerAddress, ShardingConfig } from "@effect/cluster"
import { HashRing } from "effect"

/**
 * Where the cluster puts an entity or a singleton, as every runner computes it; apart from
 * cluster.ts (which needs vitest) so that the failover benchmark picks its victims with it too.
 */

/**
 * Where @effect/cluster puts an entity, as every runner computes it: the entity id's shard
 * (`Sharding.getShardId`), and the shards spread over the healthy runners' addresses by a hash
 * ring (`HashRing.getShards`, weight `runnerShardWeight`). A prediction (e.g. to pick the port
 * of a runner that joins): what moved is always read from the runners themselves.
 */
export const ownerPort = (runnerPorts: ReadonlyArray<number>, entityId: string) => {
  const { runnerShardWeight, shardsPerGroup } = ShardingConfig.defaults
  const ring = HashRing.make<RunnerAddress.RunnerAddress>()
  for (const port of runnerPorts) HashRing.add(ring, RunnerAddress.make("127.0.0.1", port), { weight: runnerShardWeight })
  // @effect/cluster's internal/hash.ts `hashString`
  let h = 5381
  for (let i = entityId.length; i;) h = (h * 33) ^ entityId.charCodeAt(--i)
  h = (h & 0xbfffffff) | ((h >>> 1) & 0x40000000)
  return HashRing.getShards(ring, shardsPerGroup)![Math.abs(h % shardsPerGroup)]!.port
}

/**
 * The library's singleton that health-checks the runners. A runner that hosts it and dies used to
 * be found only when its heartbeat expired (35 s); `RunnerLiveness` finds it like any other.
 */
export const HEALTH_CHECK_SINGLETON = "effect/cluster/Sharding/RunnerHealth"

/** Switchboard's singleton that wakes every session that should run (`Reconciler.ts`). */
export const RECONCILER_SINGLETON = "switchboard/reconcile"
