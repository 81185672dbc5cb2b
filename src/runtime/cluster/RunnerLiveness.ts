import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"
import * as net from "node:net"

/**
 * Finding a dead runner in about a second, on every runner.
 *
 * @effect/cluster takes a dead runner's shards away when its health check (a cluster singleton)
 * finds it dead, or when its heartbeat in `cluster_runners` is older than the shard-lock expiry
 * (35 s). When the dead runner was the one running the health check, only the expiry is left: its
 * sessions, the webhook dispatcher and the reconciler waited 20–35 s to come back. A shorter
 * expiry is no cure: it shortens the heartbeat's own timeout, and a loaded runner whose heartbeat
 * waits behind busy Postgres connections then drops its shards while it is alive.
 *
 * So liveness is told apart from the lock heartbeat. Each runner holds a Postgres advisory lock of
 * its own, keyed by its `machine_id`, on a connection that does nothing else: Postgres frees it
 * the moment the runner's process dies (its socket closes), and keeps it however busy the runner
 * is, since nothing has to answer in time. Every runner looks, once a second, at the others'
 * locks: a runner whose lock it has seen held and now finds free, and whose cluster port does not
 * take a TCP connection either (two tries), is marked unhealthy in `cluster_runners`, the mark
 * the library's own health check sets; every runner then moves its shards within its next
 * assignment refresh (1 s). Both signals are needed: a live runner whose Postgres connection
 * dropped still takes connections, and a live runner's port takes connections however busy its
 * event loop is (the kernel answers). A runner that is marked by mistake is only moved, never run
 * twice (the shard locks still decide), and the library's health check marks it healthy again.
 *
 * A machine that vanishes without closing its sockets is still found by the library's health
 * check and the expiry: Postgres frees the lock of a connection it cannot see close only after
 * its TCP keep-alive, which is asked here to give up after about 10 s.
 */

/** The first key of every runner's liveness lock (two int4 keys, apart from the shard locks' single bigint keys). */
const LIVENESS_LOCK_CLASS = 0x53424c56
/** How often a runner looks at the others' locks, and at its own. */
const CHECK_EVERY = Duration.seconds(1)
/** How long a dead runner's cluster port has to take a connection, per try. */
const CONNECT_TIMEOUT = Duration.seconds(1)
/** The runner registry of @effect/cluster's `SqlRunnerStorage.layer` (prefix `cluster`). */
const RUNNERS_TABLE = "cluster_runners"

/** Whether a runner's port takes a TCP connection: its process is there, busy or not. */
const takesConnections = (address: string): Effect.Effect<boolean> => {
  const colon = address.lastIndexOf(":")
  const host = address.slice(0, colon)
  const port = Number(address.slice(colon + 1))
  return Effect.async<boolean>((resume) => {
    const socket = net.connect({ host, port })
    const done = (taken: boolean) => {
      socket.destroy()
      resume(Effect.succeed(taken))
    }
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
    socket.setTimeout(Duration.toMillis(CONNECT_TIMEOUT), () => done(false))
    return Effect.sync(() => socket.destroy())
  })
}

/** Not taking connections twice, 250 ms apart. */
const refusesConnections = (address: string) =>
  takesConnections(address).pipe(
    Effect.flatMap((taken) => taken ? Effect.succeed(true) : Effect.delay(takesConnections(address), Duration.millis(250))),
    Effect.map((taken) => !taken)
  )

/** A lock of the liveness class held in this database, by any connection, for the runner `machine_id` of the row `r`. */
const lockHeld = `EXISTS (
  SELECT 1 FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid::bigint = ${LIVENESS_LOCK_CLASS} AND l.objid::bigint = r.machine_id
)`

/**
 * Holds this runner's liveness lock on a connection of its own, for the life of the scope: taken
 * once the runner is registered, taken again under its new `machine_id` if it registers again,
 * and on a new connection if that one fails.
 */
const holdOwnLock = (sql: SqlClient.SqlClient, self: string) =>
  Effect.gen(function*() {
    // The registry is made by the runner storage's layer, which the first runner may still be building.
    yield* sql.unsafe<{ made: boolean }>(`SELECT to_regclass('${RUNNERS_TABLE}') IS NOT NULL AS made`).pipe(
      Effect.repeat({ until: (rows) => rows[0]?.made === true, schedule: Schedule.spaced(CHECK_EVERY) })
    )
    const connection = yield* sql.reserve
    // A runner whose machine vanishes is let go of after ~10 s rather than the system's two hours.
    for (const [name, value] of [["tcp_keepalives_idle", 5], ["tcp_keepalives_interval", 2], ["tcp_keepalives_count", 3]] as const) {
      yield* connection.executeRaw(`SET ${name} = ${value}`, [])
    }
    let held: number | undefined
    while (true) {
      const rows = yield* connection.executeValues(`SELECT machine_id FROM ${RUNNERS_TABLE} WHERE address = $1`, [self])
      const machineId = rows[0]?.[0] as number | undefined
      if (machineId !== undefined && machineId !== held) {
        if (held !== undefined) yield* connection.executeRaw("SELECT pg_advisory_unlock($1::int4, $2::int4)", [LIVENESS_LOCK_CLASS, held])
        const taken = yield* connection.executeValues("SELECT pg_try_advisory_lock($1::int4, $2::int4)", [LIVENESS_LOCK_CLASS, machineId])
        // Not taken: the connection of this address' previous process is still being closed.
        held = taken[0]?.[0] === true ? machineId : undefined
      }
      yield* Effect.sleep(CHECK_EVERY)
    }
  }).pipe(
    Effect.scoped,
    Effect.tapErrorCause((cause) => Effect.logWarning("the runner's liveness lock was lost; taking it again", cause)),
    Effect.retry(Schedule.spaced(CHECK_EVERY))
  )

/**
 * Once a second: the other healthy runners and whether their liveness lock is held. One seen held
 * and now free, whose port refuses connections, is marked unhealthy (in the same statement that
 * finds its lock still free, so a process restarted meanwhile is left alone).
 */
const watchOthers = (sql: SqlClient.SqlClient, self: string) =>
  Effect.gen(function*() {
    /** address → the machine_id whose lock was seen held */
    const seenAlive = new Map<string, number>()
    const check = Effect.gen(function*() {
      const rows = yield* sql.unsafe<{ address: string; machine_id: number; alive: boolean }>(
        `SELECT r.address, r.machine_id, ${lockHeld} AS alive FROM ${RUNNERS_TABLE} r WHERE r.healthy AND r.address <> $1`,
        [self]
      )
      for (const { address, alive, machine_id } of rows) {
        if (alive) {
          seenAlive.set(address, machine_id)
          continue
        }
        if (seenAlive.get(address) !== machine_id || !(yield* refusesConnections(address))) continue
        const marked = yield* sql.unsafe(
          `UPDATE ${RUNNERS_TABLE} r SET healthy = false WHERE r.address = $1 AND r.machine_id = $2 AND r.healthy AND NOT ${lockHeld} RETURNING r.address`,
          [address, machine_id]
        )
        seenAlive.delete(address)
        if (marked.length > 0) {
          yield* Effect.logWarning(`runner ${address} is gone (its Postgres connection closed, its port refuses connections): its shards move now`)
        }
      }
    })
    // A check that keeps failing (e.g. no right to read pg_locks) turns fast failover off: said
    // once as a warning when it starts failing, not every second.
    let failing = false
    yield* check.pipe(
      Effect.tap(() => Effect.sync(() => void (failing = false))),
      Effect.catchAllCause((cause) => {
        const first = !failing
        failing = true
        return first
          ? Effect.logWarning("runner liveness check failed: a dead runner is found by the health check or the 35 s lock expiry until it works again", cause)
          : Effect.logDebug("runner liveness check failed", cause)
      }),
      Effect.repeat(Schedule.spaced(CHECK_EVERY))
    )
  })

/** This runner's liveness lock, and the watch over the others', for the life of the layer; `self` is `host:port`. */
export const RunnerLivenessLive = (self: string) =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.forkScoped(holdOwnLock(sql, self))
    yield* Effect.forkScoped(watchOthers(sql, self))
  }))
