/**
 * Two builds of the gateway side by side: both started at once, then measured in alternating
 * windows (A B B A A B …), so that what else the machine does falls on both alike. `npm run bench`
 * measures one build after the references; between two runs of it this machine's speed moved by
 * up to 60 %, more than most changes to the send path. Here each window is short and its
 * neighbours are the other build's, so the paired ratios show a change of a few percent.
 *
 * Per window: send-text for BENCH_WINDOW s from BENCH_CONNECTIONS connections, then wait until
 * none of the window's messages is pending; the figure is the gateway's CPU from the start of
 * the load until then (less its idle CPU over the quiet time waited after the last change), over
 * the window's messages that went out: CPU per message accepted and sent, as `npm run bench`
 * prints it.
 *
 *   BENCH_A, BENCH_B   the two gateway scripts (default A: dist/bundle/main.js; B is required,
 *                      e.g. a copy of an earlier build's dist/bundle beside it)
 *   BENCH_WARMUP       seconds of warm-up load each (default 10)
 *   BENCH_WINDOW       seconds of load per window (default 5)
 *   BENCH_ROUNDS       windows per build (default 20: a window's figure varies by ±15 % here)
 *   BENCH_DRAIN_MAX    seconds to wait at most for a window's messages to go out (default 120)
 *   BENCH_CONNECTIONS  concurrent connections (default 20)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { loadProblems, runLoad } from "./lib/load.js"
import { machineLoad } from "./lib/proc.js"
import { killAllServers } from "./lib/processes.js"
import { finishBenchmark, log, numberFromEnv, table } from "./lib/report.js"
import { openStoreReader, sentOrBeyond, settleAfter, type StoreReader, waitUntilNonePending } from "./lib/storeReader.js"
import { cpuUntilLastSent, idleCpuPerSecond, SEND_BODY, SEND_HEADERS, startSwitchboard, stopSwitchboard, type Switchboard } from "./lib/switchboard.js"

const WARMUP = numberFromEnv("BENCH_WARMUP", 10)
const WINDOW = numberFromEnv("BENCH_WINDOW", 5)
const ROUNDS = Math.round(numberFromEnv("BENCH_ROUNDS", 20))
const DRAIN_MAX = numberFromEnv("BENCH_DRAIN_MAX", 120)
const CONNECTIONS = Math.round(numberFromEnv("BENCH_CONNECTIONS", 20))
const here = path.dirname(fileURLToPath(import.meta.url))
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-compare-"))
const problems: Array<string> = []

interface Build {
  readonly name: "A" | "B"
  readonly gateway: Switchboard
  readonly reader: StoreReader
  /** Its CPU seconds per second while idle with the session ready. */
  readonly idleCpuPerSecond: number
  readonly cpuMsPerMessage: Array<number>
  readonly perSecond: Array<number>
}

/**
 * One window of load on `build`, until its messages went out: CPU ms per message accepted and
 * sent (its CPU from the start of the load until none was pending, less its idle CPU over the
 * quiet time waited after the last change, over the messages that went out).
 */
const measureWindow = async (build: Build, seconds: number) => {
  const { gateway, reader } = build
  const server = gateway.process
  const before = await reader.statusCounts(gateway.sessionId)
  const cpuFrom = server.cpuSeconds()
  const result = await runLoad({ url: gateway.sendUrl, body: SEND_BODY, headers: SEND_HEADERS, connections: CONNECTIONS, seconds })
  const problems = loadProblems(`build ${build.name}`, result, [429])
  if (problems.length > 0) throw new Error(problems.join("; "))
  const drainStart = performance.now()
  // messages a cut-off request stored but never queued stay pending: an earlier window's too
  const drain = await waitUntilNonePending(reader, gateway.sessionId, {
    maxSeconds: DRAIN_MAX,
    settleSeconds: settleAfter(result.p99),
    mayStayPending: (before["pending"] ?? 0) + result.cutOff
  })
  if (!drain.drained) throw new Error(`build ${build.name}: ${drain.pending} message(s) still pending ${DRAIN_MAX} s after a window`)
  const cpu = cpuUntilLastSent(server, build.idleCpuPerSecond, cpuFrom, drainStart, drain)
  const sent = sentOrBeyond(drain.counts) - sentOrBeyond(before)
  if (sent <= 0) throw new Error(`build ${build.name}: no message went out in a window`)
  return { cpuMsPerMessage: (cpu * 1000) / sent, perSecond: result.okPerSecond }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const main = async () => {
  const b = process.env["BENCH_B"]
  if (b === undefined) throw new Error("BENCH_B: the second build's main.js is required")
  const scriptB = path.resolve(b)
  const scriptA = path.resolve(process.env["BENCH_A"] ?? path.join(here, "..", "dist", "bundle", "main.js"))
  for (const script of [scriptA, scriptB]) if (!fs.existsSync(script)) throw new Error(`${script}: no such gateway script`)
  log(`A ${scriptA}`)
  log(`B ${scriptB}`)
  log(`at start: ${machineLoad()}`)
  const builds: Array<Build> = []
  try {
    await compare(builds, scriptA, scriptB)
  } finally {
    for (const build of builds) {
      await build.reader.close()
      const problem = await stopSwitchboard(build.gateway)
      if (problem !== undefined) problems.push(problem)
    }
    await killAllServers()
  }
  log(`at end: ${machineLoad()}`)
}

const compare = async (builds: Array<Build>, scriptA: string, scriptB: string) => {
  for (const [name, script] of [["A", scriptA], ["B", scriptB]] as const) {
    const dir = path.join(workDir, name)
    fs.mkdirSync(dir)
    const gateway = await startSwitchboard(dir, { script })
    const idle = await idleCpuPerSecond(gateway.process)
    builds.push({ name, gateway, reader: openStoreReader(gateway.databaseUrl), idleCpuPerSecond: idle, cpuMsPerMessage: [], perSecond: [] })
  }
  const [first, second] = builds as [Build, Build]
  for (const build of builds) await measureWindow(build, WARMUP)
  for (let round = 0; round < ROUNDS; round++) {
    // A B, B A, A B …: neither build always goes first
    for (const build of round % 2 === 0 ? [first, second] : [second, first]) {
      const measured = await measureWindow(build, WINDOW)
      build.cpuMsPerMessage.push(measured.cpuMsPerMessage)
      build.perSecond.push(measured.perSecond)
    }
  }
  const pairs = first.cpuMsPerMessage.map((cpuA, i) => second.cpuMsPerMessage[i]! / cpuA)
  console.log(`\nCPU ms per message accepted and sent, ${ROUNDS} windows of ${WINDOW} s each, alternating\n`)
  console.log(table([
    ["window", ...first.cpuMsPerMessage.map((_, i) => String(i + 1)), "median"],
    ["A", ...first.cpuMsPerMessage.map((x) => x.toFixed(3)), median(first.cpuMsPerMessage).toFixed(3)],
    ["B", ...second.cpuMsPerMessage.map((x) => x.toFixed(3)), median(second.cpuMsPerMessage).toFixed(3)],
    ["B / A", ...pairs.map((x) => x.toFixed(3)), median(pairs).toFixed(3)],
    ["A /s", ...first.perSecond.map((x) => x.toFixed(0)), median(first.perSecond).toFixed(0)],
    ["B /s", ...second.perSecond.map((x) => x.toFixed(0)), median(second.perSecond).toFixed(0)]
  ]))
  console.log(`\nB took ${median(pairs).toFixed(3)}× A's CPU per message (median of the ${ROUNDS} pairs); B lower in ${pairs.filter((x) => x < 1).length} of ${ROUNDS}`)
}

await finishBenchmark(main, workDir, problems)
