/**
 * One round: `count` runners (or one CLUSTER=off gateway) on a fresh database and a Redis
 * database of their own. Start-up, idle CPU, the send load, when the accepted messages went
 * out, then the runners are stopped with SIGTERM and the warnings in their logs collected.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { freePort } from "../../test/support/servers/common.js"
import { freshPostgresUrlPromise } from "../../test/support/servers/postgresDatabase.js"
import { createSessions, total, waitUntilReady } from "./api.js"
import { type Backends, statusCounts, type StatusCounts, waitForShardSplit } from "./backends.js"
import { cpuBetween, type CpuSpent, sampleCpu } from "./cpu.js"
import { startSendLoad } from "./load.js"
import { type Runner, startRunner, warningsIn, workDir } from "./runners.js"
import { CONNECTIONS, DRAIN_MAX, DURATION, IDLE, log, type RunnerCount, SESSIONS, SETTLE, since, WARMUP } from "./settings.js"

export interface Round {
  readonly label: string
  readonly shards: string
  /** Seconds from spawning the first runner until all listened. */
  readonly listenSeconds: number
  /** Seconds from creating the sessions until all were ready. */
  readonly startupSeconds: number
  /** Until all POST /api/sessions had answered. */
  readonly createSeconds: number
  readonly sendsPerSecond: number
  /** 2xx answered in the measured window. */
  readonly measuredOk: number
  readonly p50: number
  readonly p99: number
  /** 2xx answered in all (warm-up and the tail included). */
  readonly accepted: number
  readonly refused: Record<string, number>
  /** Outgoing messages counted through the API (each session asked at another runner than the one it was created at). */
  readonly storedViaApi: number
  /** Sessions whose count through the API differs from what was accepted for them. */
  readonly mismatched: number
  readonly storedInDb: number
  /** At `countedAfter` s after the load: */
  readonly goneOut: number
  readonly failed: number
  readonly pendingAtSettle: number
  readonly countedAfter: number
  /** Seconds after the load until no message was pending; undefined when some still were at the end. */
  readonly drainedAfter: number | undefined
  readonly pendingAtEnd: number
  /** Sessions ready, no requests. */
  readonly idle: CpuSpent
  /** The measured window. */
  readonly window: CpuSpent
  /** From the start of the warm-up until the last accepted message had gone out. */
  readonly full: CpuSpent | undefined
  readonly exits: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

export const drainedText = (r: Pick<Round, "drainedAfter" | "pendingAtEnd">) =>
  r.drainedAfter === undefined
    ? `${r.pendingAtEnd} STILL PENDING ${SETTLE + DRAIN_MAX} s after the load`
    : `the last went out ${r.drainedAfter.toFixed(1)} s after the load`

/**
 * Polls the statuses of the outgoing messages after the load ended at `loadEnd`: as they are
 * SETTLE s after it, and when none is pending any more (with `cpuSoFar` then), DRAIN_MAX s more at most.
 */
const watchOutgoing = async (backends: Backends, databaseUrl: string, loadEnd: number, cpuSoFar: () => CpuSpent) => {
  let atSettle: { counts: StatusCounts; after: number } | undefined
  let drained: { after: number; cpu: CpuSpent } | undefined
  let last: StatusCounts = {}
  for (;;) {
    last = await statusCounts(backends, databaseUrl)
    const after = since(loadEnd)
    if (drained === undefined && (last["pending"] ?? 0) === 0) drained = { after, cpu: cpuSoFar() }
    if (atSettle === undefined && after >= SETTLE) atSettle = { counts: last, after }
    if ((atSettle !== undefined && drained !== undefined) || after >= SETTLE + DRAIN_MAX) break
    await sleep(500)
  }
  return { atSettle: atSettle ?? { counts: last, after: since(loadEnd) }, drained, pendingAtEnd: last["pending"] ?? 0 }
}

export const runRound = async (count: RunnerCount, index: number, backends: Backends): Promise<Round> => {
  const label = count === "off" ? "1 (CLUSTER=off)" : String(count)
  const size = count === "off" ? 1 : count
  const dir = path.join(workDir, `round-${index}-${count}`)
  fs.mkdirSync(dir)
  const databaseUrl = await freshPostgresUrlPromise(`bench_cluster_${count}`)
  const database = new URL(databaseUrl).pathname.slice(1)
  const cacheUrl = `${backends.redisUrl}/${index + 1}` // a Redis database of its own per round
  log(`── ${count === "off" ? "one gateway, CLUSTER=off" : `${count} runner(s), CLUSTER=on`}: database ${database}, CACHE_URL ${cacheUrl}`)

  const runners: Array<Runner> = []
  try {
    const started = performance.now()
    const start = async (i: number) => {
      const env: Record<string, string> = { DATABASE_URL: databaseUrl, CACHE_URL: cacheUrl }
      if (count !== "off") Object.assign(env, { CLUSTER: "on", CLUSTER_HOST: "127.0.0.1", CLUSTER_PORT: String(await freePort()) })
      runners.push(await startRunner(`runner-${i + 1}`, dir, env))
    }
    // The first runner alone (it migrates the fresh database), then the others together.
    await start(0)
    const others = await Promise.allSettled(Array.from({ length: size - 1 }, (_, i) => start(i + 1)))
    const failure = others.find((result): result is PromiseRejectedResult => result.status === "rejected")
    if (failure !== undefined) throw failure.reason
    runners.sort((a, b) => a.name.localeCompare(b.name))
    const listenSeconds = since(started)
    log(`runners listening after ${listenSeconds.toFixed(1)} s: ${runners.map((r) => `${r.name} pid ${r.pid} ${r.url}`).join(", ")}`)
    const shards = count === "off" ? "n/a" : await waitForShardSplit(backends, database, size, started)
    const urls = runners.map((r) => r.url)

    // 1. Start-up
    const createStart = performance.now()
    const sessionIds = await createSessions(urls, SESSIONS)
    const createSeconds = since(createStart)
    await waitUntilReady(urls[0]!, SESSIONS, createStart)
    const startupSeconds = since(createStart)
    log(`start-up: ${SESSIONS} sessions ready in ${startupSeconds.toFixed(2)} s (all ${SESSIONS} POSTs answered after ${createSeconds.toFixed(2)} s)`)

    // What the cluster costs with the sessions ready and no requests (polls, health checks, keep-alives).
    const cpuNow = () => sampleCpu({ runners: runners.map((r) => r.pid), postgres: backends.postgresPid, redis: backends.redisPid })
    await sleep(1000)
    const idleFrom = cpuNow()
    await sleep(IDLE * 1000)
    const idle = cpuBetween(idleFrom, cpuNow())

    // 2. Sends
    log(`sends: ${CONNECTIONS} connections over ${size} API port(s), round-robin over ${SESSIONS} sessions, ${WARMUP} s warm-up + ${DURATION} s measured`)
    const loadFrom = cpuNow()
    const load = startSendLoad(urls, sessionIds)
    await sleep(WARMUP * 1000)
    const windowFrom = cpuNow()
    load.measure()
    await sleep(DURATION * 1000)
    // Responses still in flight finish (and count as accepted), but not in the measured rate.
    const stopped = load.stop()
    const window = cpuBetween(windowFrom, cpuNow())
    const sends = await stopped
    const loadEnd = performance.now()
    if (sends.accepted === 0) throw new Error(`no send was accepted: ${JSON.stringify(sends.refused)}`)

    // 3. What went out, from the Store; and through the API (every runner lists any session's messages).
    const { atSettle, drained, pendingAtEnd } = await watchOutgoing(backends, databaseUrl, loadEnd, () => cpuBetween(loadFrom, cpuNow()))
    const storedPerSession = await Promise.all(sessionIds.map((id, i) =>
      total(urls[(i + 1) % size]!, `/api/sessions/${id}/messages?direction=out&limit=1`)
    ))
    const storedInDb = Object.values(atSettle.counts).reduce((a, b) => a + b, 0)
    const pendingAtSettle = atSettle.counts["pending"] ?? 0
    const failed = atSettle.counts["failed"] ?? 0
    const round: Omit<Round, "exits" | "warnings"> = {
      label,
      shards,
      listenSeconds,
      startupSeconds,
      createSeconds,
      sendsPerSecond: sends.measuredOk / window.seconds,
      measuredOk: sends.measuredOk,
      p50: sends.p50,
      p99: sends.p99,
      accepted: sends.accepted,
      refused: sends.refused,
      storedViaApi: storedPerSession.reduce((a, b) => a + b, 0),
      mismatched: storedPerSession.filter((n, i) => n !== sends.acceptedPerSession[i]).length,
      storedInDb,
      goneOut: storedInDb - pendingAtSettle - failed,
      failed,
      pendingAtSettle,
      countedAfter: atSettle.after,
      drainedAfter: drained?.after,
      pendingAtEnd,
      idle,
      window,
      full: drained?.cpu
    }
    log(`sends: ${round.sendsPerSecond.toFixed(0)}/s accepted (p50 ${round.p50.toFixed(0)} ms, p99 ${round.p99.toFixed(0)} ms); ` +
      `${round.accepted} accepted in all, ${storedInDb} stored, ${round.goneOut} gone out and ${pendingAtSettle} pending ${atSettle.after.toFixed(1)} s after the load` +
      `${failed > 0 ? `, ${failed} FAILED` : ""}; ${drainedText(round)}` +
      `${Object.keys(round.refused).length > 0 ? `; refused: ${JSON.stringify(round.refused)}` : ""}`)

    // Stop the runners now (not in `finally`), to see how they exit.
    const stoppedRunners = runners.splice(0)
    const exits = await Promise.all(stoppedRunners.map(async (r) => `${r.name}: ${await r.stop()}`))
    return { ...round, exits, warnings: stoppedRunners.flatMap(warningsIn) }
  } catch (error) {
    for (const r of runners) {
      console.error(`----- ${r.name} (pid ${r.pid}) output, last 5,000 characters -----\n${r.output().slice(-5_000) || "(empty)"}`)
    }
    throw error
  } finally {
    await Promise.all(runners.map((r) => r.stop()))
  }
}
