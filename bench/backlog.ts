/**
 * Does sending keep up with accepting? Switchboard (sandbox engine, pacing and rate limits off,
 * one session) under BENCH_DURATION s (default 30) of send-text load from BENCH_CONNECTIONS
 * connections, after BENCH_WARMUP s of warm-up whose messages go out first. Printed per
 * BENCH_WINDOW s window (default 5) and overall: accepted/s (2xx answers seen by the load
 * generator), sent/s (messages that reached `sent` or beyond), refused with 429 (the gateway's
 * backpressure, if it has any), the ratio sent/accepted, and how long after the load the last
 * accepted message went out. Bar (issue 19): sent ≥ 0.9× accepted over the load.
 *
 * Watching costs the gateway nothing on its event loop: this process reads the Store itself
 * (lib/storeReader.ts: a read-only connection to the SQLite file, or its own Postgres
 * connection), one `SELECT status, count(*) … GROUP BY status` at each window's end, and every
 * 200 ms after the load until none is `pending`.
 *
 * `npm run bench:backlog` (builds first). BENCH_STORE=postgres runs it on the test suite's
 * Postgres. BENCH_DRAIN_MAX (default 300) caps the wait after the load, BENCH_KEEP=1 keeps the
 * temp dir. Exit code 1 only for a broken run (as bench/send-text.ts).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type LoadResult, loadProblems, runLoad } from "./lib/load.js"
import { startBenchPostgres } from "./lib/postgres.js"
import { machineLoad } from "./lib/proc.js"
import { killAllServers } from "./lib/processes.js"
import { bar, finishBenchmark, fmt, log, numberFromEnv, ratio, since, storeFromEnv, table } from "./lib/report.js"
import { openStoreReader, sentOrBeyond, settleAfter, type StatusCounts, total, waitUntilNonePending } from "./lib/storeReader.js"
import { SEND_BODY, SEND_HEADERS, startSwitchboard, stopSwitchboard } from "./lib/switchboard.js"

const DURATION = numberFromEnv("BENCH_DURATION", 30)
const WINDOW = numberFromEnv("BENCH_WINDOW", 5)
const WARMUP = numberFromEnv("BENCH_WARMUP", 2)
const CONNECTIONS = Math.round(numberFromEnv("BENCH_CONNECTIONS", 20))
const DRAIN_MAX = numberFromEnv("BENCH_DRAIN_MAX", 300)
const STORE = storeFromEnv()
const SENT_BAR = 0.9

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-backlog-"))
const problems: Array<string> = []

interface Window {
  readonly from: number
  readonly seconds: number
  readonly accepted: number
  readonly refused: number
  readonly sent: number
  /**
   * Accepted but not yet sent at the window's end (below 0 when requests the client gave up on
   * were stored and sent all the same: shown as 0).
   */
  readonly backlog: number
}

const main = async () => {
  const started = performance.now()
  log(`node ${process.version}, temp dir ${workDir}`)
  log(`at start: ${machineLoad()}`)
  log(`${CONNECTIONS} connections, ${WARMUP} s warm-up, ${DURATION} s of load in ${WINDOW} s windows, store ${STORE}`)
  const postgres = STORE === "postgres" ? await startBenchPostgres() : undefined
  const gateway = await startSwitchboard(workDir, {
    ...(postgres === undefined ? {} : { databaseUrl: await postgres.freshDatabase("bench_backlog") })
  })
  const reader = openStoreReader(gateway.databaseUrl)
  const { sessionId } = gateway
  try {
    log(`switchboard pid ${gateway.process.pid} at ${gateway.process.url}, session ${sessionId} ready (${gateway.databaseUrl})`)
    const warm = await runLoad({ url: gateway.sendUrl, body: SEND_BODY, headers: SEND_HEADERS, connections: CONNECTIONS, seconds: WARMUP })
    problems.push(...loadProblems("warm-up", warm, [429]))
    const warmDrain = await waitUntilNonePending(reader, sessionId, { maxSeconds: DRAIN_MAX, settleSeconds: settleAfter(warm.p99), mayStayPending: warm.cutOff })
    log(`warm-up: ${fmt(warm.ok)} accepted, all sent ${warmDrain.seconds.toFixed(1)} s after it${warmDrain.drained ? "" : " (NOT all: still pending)"}`)

    // Windows: the load generator counts the answers, the Store says what went out.
    const first = await reader.statusCounts(sessionId)
    const windows: Array<Window> = []
    let accepted = 0
    let refused = 0
    let previous: StatusCounts = first
    let acceptedTotal = 0
    const loadStart = performance.now()
    let windowStart = loadStart
    /** Ends the current window; the last one, when short (timer jitter), is merged into the one before. */
    const closeWindow = async (last = false) => {
      const counts = await reader.statusCounts(sessionId)
      const now = performance.now()
      acceptedTotal += accepted
      const merged = last && (now - windowStart) / 1000 < WINDOW / 2 ? windows.pop() : undefined
      windows.push({
        from: merged?.from ?? (windowStart - loadStart) / 1000,
        seconds: (now - windowStart) / 1000 + (merged?.seconds ?? 0),
        accepted: accepted + (merged?.accepted ?? 0),
        refused: refused + (merged?.refused ?? 0),
        sent: sentOrBeyond(counts) - sentOrBeyond(previous) + (merged?.sent ?? 0),
        backlog: acceptedTotal - (sentOrBeyond(counts) - sentOrBeyond(first))
      })
      accepted = 0
      refused = 0
      previous = counts
      windowStart = now
    }
    let closing = Promise.resolve()
    const timer = setInterval(() => void (closing = closing.then(() => closeWindow())), WINDOW * 1000)
    const result: LoadResult = await runLoad({
      url: gateway.sendUrl,
      body: SEND_BODY,
      headers: SEND_HEADERS,
      connections: CONNECTIONS,
      seconds: DURATION,
      onResponse: (status) => {
        if (status >= 200 && status < 300) accepted++
        else if (status === 429) refused++
      }
    })
    clearInterval(timer)
    await closing
    await closeWindow(true)
    const loadSeconds = since(loadStart)
    const atLoadEnd = previous
    problems.push(...loadProblems("load", result, [429]))

    const drain = await waitUntilNonePending(reader, sessionId, {
      maxSeconds: DRAIN_MAX,
      settleSeconds: settleAfter(result.p99),
      mayStayPending: warmDrain.pending + result.cutOff
    })
    const storedInLoad = total(drain.counts) - total(first)
    if (storedInLoad < result.ok) problems.push(`${result.ok - storedInLoad} accepted message(s) missing from the Store`)
    if ((drain.counts["failed"] ?? 0) > 0) problems.push(`${drain.counts["failed"]} message(s) failed to send`)

    const acceptedInLoad = windows.reduce((sum, w) => sum + w.accepted, 0)
    const sentInLoad = sentOrBeyond(atLoadEnd) - sentOrBeyond(first)
    console.log(`\nsend-text for ${DURATION} s from ${CONNECTIONS} connections, pacing off, ${STORE}: accepted vs sent per ${WINDOW} s window\n`)
    console.log(table([
      ["window (s)", "accepted/s", "sent/s", "sent/accepted", "429/s", "backlog at end"],
      ...windows.map((w) => [
        `${w.from.toFixed(0)}–${(w.from + w.seconds).toFixed(0)}`,
        fmt(w.accepted / w.seconds),
        fmt(w.sent / w.seconds),
        ratio(w.sent, w.accepted),
        fmt(w.refused / w.seconds),
        fmt(Math.max(0, w.backlog))
      ]),
      ["overall", fmt(acceptedInLoad / loadSeconds), fmt(sentInLoad / loadSeconds), ratio(sentInLoad, acceptedInLoad), fmt(windows.reduce((s, w) => s + w.refused, 0) / loadSeconds), fmt(Math.max(0, acceptedInLoad - sentInLoad))]
    ]))
    console.log(`\nlatency p50 ${fmt(result.p50, 1)} ms, p99 ${fmt(result.p99, 1)} ms; ${fmt(result.ok)} accepted in all`)
    console.log(drain.drained
      ? `the last accepted message went out ${drain.seconds.toFixed(1)} s after the load ended (polled every 200 ms)`
      : `${drain.pending} message(s) still pending ${DRAIN_MAX} s after the load ended`)
    if (drain.drained && drain.pending > 0) {
      console.log(`${drain.pending} message(s) stayed pending: stored by requests cut off in flight when a load stopped (the client had gone), never queued`)
    }
    console.log("")
    console.log(bar(`sent ≥ ${SENT_BAR}× accepted during the load`, acceptedInLoad > 0 ? sentInLoad >= SENT_BAR * acceptedInLoad : undefined, `${ratio(sentInLoad, acceptedInLoad)} (${fmt(sentInLoad)} sent of ${fmt(acceptedInLoad)} accepted)`))
  } finally {
    await reader.close()
    const unclean = await stopSwitchboard(gateway)
    if (unclean !== undefined) problems.push(unclean)
    await killAllServers()
    await postgres?.stop()
  }
  console.log(`\nat end: ${machineLoad()}; the benchmark took ${since(started).toFixed(0)} s`)
}

await finishBenchmark(main, workDir, problems)
