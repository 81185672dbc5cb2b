/**
 * Postgres and Redis for the benchmark: the test suite's (test/support/servers/), installed with
 * apt-get when missing and started on loopback in temp dirs; and what the benchmark reads from
 * Postgres with psql, so that watching costs the runners nothing: shard locks, message statuses.
 */
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { run } from "../../test/support/servers/common.js"
import { installDebianPackages } from "../../test/support/servers/packages.js"
import { findPostgresBinDir, startPostgres } from "../../test/support/servers/postgres.js"
import { findRedisServer, startRedis } from "../../test/support/servers/redis.js"
import { postmasterPid, redisServerPid } from "../lib/proc.js"
import { stopAtTheEnd } from "./runners.js"
import { log, since } from "./settings.js"

export interface Backends {
  readonly adminUrl: string
  readonly psql: string
  readonly redisUrl: string
  readonly postgresPid: number | undefined
  readonly redisPid: number | undefined
}

export const startBackends = async (): Promise<Backends> => {
  await installDebianPackages([
    ...(findPostgresBinDir() === undefined ? ["postgresql"] : []),
    ...(findRedisServer() === undefined ? ["redis-server"] : [])
  ])
  const binDir = findPostgresBinDir()
  const redisBinary = findRedisServer()
  if (binDir === undefined || redisBinary === undefined) throw new Error("Postgres or Redis is still missing after installing them")
  const [postgres, redis] = await Promise.all([startPostgres(binDir), startRedis(redisBinary)])
  stopAtTheEnd(postgres)
  stopAtTheEnd(redis)
  Object.assign(process.env, postgres.env) // freshPostgresUrl reads TEST_POSTGRES_URL
  const adminUrl = postgres.env["TEST_POSTGRES_URL"]!
  const redisUrl = redis.env["TEST_REDIS_URL"]!
  const backends = {
    adminUrl,
    psql: path.join(binDir, "psql"),
    redisUrl,
    postgresPid: postmasterPid(Number(new URL(adminUrl).port)),
    redisPid: redisServerPid(Number(new URL(redisUrl).port))
  }
  if (backends.postgresPid === undefined || backends.redisPid === undefined) {
    log("could not find the Postgres or Redis process: their CPU shows as n/a")
  }
  return backends
}

/**
 * Shards (advisory locks with one bigint key) held per runner in this database, e.g. "150/150";
 * "" when there are none. (The runners' liveness locks have two keys: objsubid 2.)
 */
const shardLocks = async (backends: Backends, database: string) => {
  const query = `SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND d.datname = '${database}' GROUP BY l.pid ORDER BY 1 DESC`
  const { stdout } = await run(backends.psql, [backends.adminUrl, "-At", "-c", query])
  return stdout.trim().split("\n").filter(Boolean).join("/")
}

/**
 * Shards move to a runner that joins within a few seconds: waits until each of the `runners`
 * holds a share and the split stayed the same for 2 s (60 s at most), so that start-up is not
 * measured during a rebalance. Resolves with the split.
 */
export const waitForShardSplit = async (backends: Backends, database: string, runners: number, started: number) => {
  const deadline = performance.now() + 60_000
  let shards = ""
  let previous = ""
  let stableSince = performance.now()
  for (;;) {
    shards = await shardLocks(backends, database)
    if (shards !== previous) {
      previous = shards
      stableSince = performance.now()
    }
    if (shards.split("/").filter(Boolean).length === runners && since(stableSince) >= 2) break
    if (performance.now() > deadline) {
      log(`WARNING: shard split not settled after 60 s (locks per runner: ${shards || "none"}); measuring anyway`)
      break
    }
    await sleep(250)
  }
  log(`shards held per runner (advisory locks): ${shards}, settled ${since(started).toFixed(1)} s after the first runner started`)
  return shards
}

export type StatusCounts = Record<string, number>

/** Outgoing messages in the Store by status. */
export const statusCounts = async (backends: Backends, databaseUrl: string): Promise<StatusCounts> => {
  const { stdout } = await run(backends.psql, [databaseUrl, "-At", "-c", "SELECT status, count(*) FROM messages WHERE from_me = 1 GROUP BY status"])
  const counts: StatusCounts = {}
  for (const line of stdout.trim().split("\n").filter(Boolean)) {
    const [status, count] = line.split("|")
    counts[status!] = Number(count)
  }
  return counts
}
