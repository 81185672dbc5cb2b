/**
 * Start-up at scale (`npm run bench:startup`, needs `npm run build`): how long a gateway
 * restarted with N running sandbox sessions takes to listen, to answer its health check and
 * to have every session `ready` again, and what an idle ready session costs in RSS.
 *
 * For each N a data dir is prepared once through the API (N sessions created with autoStart,
 * linked, then the gateway stopped with SIGTERM) and kept as a template in the system's temp
 * dir; every run starts `node dist/main.js` on a fresh copy of it. Times are from the spawn.
 * Then issue 19's bars, PASS or FAIL (a missed bar still exits 0: the figures are the result):
 * health within 2 s, all ready within 3 s (1,000) and 10 s (5,000), ≤ 64 KB per idle session.
 *
 *   BENCH_SESSIONS   comma-separated session counts (default 1000,5000)
 *   BENCH_NODE_ARGS  extra node flags for the measured gateway (e.g. --cpu-prof)
 *   BENCH_FRESH=1    prepare the templates again
 *   BENCH_SETTLE_SECONDS  how long the idle RSS is sampled after ready (default 120; see idleRssKb)
 *   BENCH_MAIN       the gateway script to measure (default dist/bundle/main.js, what npm start runs; e.g. another build's, for a before/after)
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { gatewayEnv, mainScript } from "../test/support/gatewayEnv.js"
import { bar } from "./lib/report.js"

const COUNTS = (process.env["BENCH_SESSIONS"] ?? "1000,5000").split(",").map(Number)
const NODE_ARGS = (process.env["BENCH_NODE_ARGS"] ?? "").split(" ").filter((arg) => arg !== "")
const MAIN = process.env["BENCH_MAIN"] ?? mainScript
const KEY = "startup-bench-key-0123456789abcdef"
/** How long the idle RSS is sampled after all are ready (see `idleRssKb`). */
const SETTLE_SECONDS = Number(process.env["BENCH_SETTLE_SECONDS"] ?? 120)
/** Issue 19's bars for a restart: the API answering, every session ready, memory per idle session. */
const HEALTH_BAR_MS = 2_000
const READY_BAR_MS = new Map([[1_000, 3_000], [5_000, 10_000]])
const RSS_BAR_KB = 64
/** Long enough for 5,000 sessions on a loaded 2-core machine; a slower start is a failed run. */
const READY_TIMEOUT_MS = 120_000

const env = (dataDir: string, extra: Record<string, string> = {}) =>
  gatewayEnv({ DATA_DIR: dataDir, API_KEY: KEY, LOG_LEVEL: "WARN", HISTORY_SYNC: "off", ...extra })

interface Running {
  readonly child: ChildProcess
  readonly spawnedAt: number
  /** ms from spawn to the `Listening on` line. */
  readonly listening: Promise<number>
  readonly baseUrl: () => string
  readonly output: () => string
}

const start = (dataDir: string, nodeArgs: ReadonlyArray<string> = []): Running => {
  const spawnedAt = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, MAIN], { env: env(dataDir), stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  let baseUrl = ""
  const listening = new Promise<number>((resolve, reject) => {
    const onData = (chunk: string) => {
      output = (output + chunk).slice(-20_000)
      const match = /Listening on (http:\/\/\S+)/.exec(output)
      if (match !== null && baseUrl === "") {
        baseUrl = match[1]!.replace(/\/+$/, "")
        resolve(performance.now() - spawnedAt)
      }
    }
    child.stdout!.setEncoding("utf8").on("data", onData)
    child.stderr!.setEncoding("utf8").on("data", onData)
    child.once("exit", (code, signal) => reject(new Error(`exited (${code ?? signal}) before listening:\n${output}`)))
  })
  return { child, spawnedAt, listening, baseUrl: () => baseUrl, output: () => output }
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill("SIGTERM")
  })

const call = async (baseUrl: string, method: string, pathname: string, body?: unknown) => {
  const response = await fetch(baseUrl + pathname, {
    method,
    headers: { "x-api-key": KEY, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: await response.json().catch(() => null) as any }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const readyCount = async (baseUrl: string) => {
  const { body } = await call(baseUrl, "GET", "/api/sessions?status=ready&limit=1&page=1")
  return body.data.pagination.total as number
}

const until = async <A>(probe: () => Promise<A>, done: (value: A) => boolean, timeoutMs: number, what: string) => {
  const deadline = performance.now() + timeoutMs
  while (true) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined && done(value)) return value
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s (last: ${JSON.stringify(value)})`)
    await sleep(20)
  }
}

/** Runs `task` over `items`, `width` at a time. */
const pool = async <A>(items: ReadonlyArray<A>, width: number, task: (item: A) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await task(items[next++]!)
  }))
}

/** The template data dir with `count` linked sandbox sessions, all running when the gateway stopped. */
const template = async (count: number) => {
  const dir = path.join(os.tmpdir(), `switchboard-startup-${count}`)
  if (fs.existsSync(path.join(dir, "complete")) && process.env["BENCH_FRESH"] !== "1") return dir
  fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(dir, { recursive: true })
  process.stdout.write(`preparing ${count} sandbox sessions in ${dir} … `)
  const gateway = start(dir)
  await gateway.listening
  const names = Array.from({ length: count }, (_, i) => `bench-${i}`)
  await pool(names, 8, async (name) => {
    const created = await call(gateway.baseUrl(), "POST", "/api/sessions", { name, autoStart: true })
    if (created.status !== 201) throw new Error(`creating ${name}: ${created.status} ${JSON.stringify(created.body)}`)
  })
  await until(() => readyCount(gateway.baseUrl()), (ready) => ready === count, READY_TIMEOUT_MS, "linking")
  await stop(gateway.child)
  fs.writeFileSync(path.join(dir, "complete"), "")
  console.log("done")
  return dir
}

const copyOf = (dir: string) => {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-startup-run-"))
  fs.cpSync(dir, copy, { recursive: true })
  return copy
}

/** CPU seconds (user + system) a process has used, from /proc (Linux, USER_HZ = 100): what a loaded machine does not inflate. */
const cpuSeconds = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** RSS of a process in KB, from /proc (Linux). */
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1])

/**
 * The RSS of the idle process, sampled once a second for `SETTLE_SECONDS`: just after ready (the
 * lowest of the first 5 samples; GC runs between them) and settled (the lowest of all). An idle
 * process is not at its smallest at once: V8 keeps the young generation it grew while busy (the
 * restore) until its memory reducer runs, here 30 s to over a minute after the load ended (46 s
 * in a traced run), and the RSS then drops by 30–60 MB, in an empty gateway too. What an idle
 * session costs in a long-running gateway is the settled figure; with a 60 s window the bench
 * read 41–60 KB or 100–130 KB per session, as the reducer's GC fell inside it or not.
 */
const idleRssKb = async (pid: number) => {
  const samples: Array<number> = []
  for (let i = 0; i < SETTLE_SECONDS; i++) {
    await sleep(1000)
    samples.push(rssKb(pid))
  }
  return { afterReady: Math.min(...samples.slice(0, 5)), settled: Math.min(...samples) }
}

interface Measured {
  readonly listeningMs: number
  readonly healthMs: number
  readonly readyMs: number
  /** CPU seconds the gateway had used when every session was ready. */
  readonly readyCpu: number
  readonly rss: { readonly afterReady: number; readonly settled: number }
}

const measure = async (dir: string, count: number, nodeArgs: ReadonlyArray<string>): Promise<Measured> => {
  const dataDir = copyOf(dir)
  const gateway = start(dataDir, nodeArgs)
  try {
    // Health is polled from the spawn on: connection refused until the port is open.
    const healthAnswered = (async () => {
      await until(async () => {
        const url = gateway.baseUrl()
        return url === "" ? 0 : (await fetch(`${url}/api/health`)).status
      }, (status) => status === 200, READY_TIMEOUT_MS, "health")
      return performance.now() - gateway.spawnedAt
    })()
    const listeningMs = await gateway.listening
    const healthMs = await healthAnswered
    await until(() => readyCount(gateway.baseUrl()), (ready) => ready === count, READY_TIMEOUT_MS, "all sessions ready")
    const readyMs = performance.now() - gateway.spawnedAt
    const readyCpu = cpuSeconds(gateway.child.pid!)
    return { listeningMs, healthMs, readyMs, readyCpu, rss: await idleRssKb(gateway.child.pid!) }
  } finally {
    await stop(gateway.child)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const mbOf = (kb: number) => (kb / 1024).toFixed(0)
const load = () => os.loadavg().map((value) => value.toFixed(2)).join(" ")

console.log(`start-up bench: ${os.cpus().length} cores, load ${load()}, node ${process.version}`)
const templates = new Map<number, string>()
for (const count of COUNTS) templates.set(count, await template(count))
const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-startup-empty-"))
const empty = await measure(emptyDir, 0, NODE_ARGS)
fs.rmSync(emptyDir, { recursive: true, force: true })
console.log(
  `empty: listening ${seconds(empty.listeningMs)}, health ${seconds(empty.healthMs)}, ` +
    `CPU ${empty.readyCpu.toFixed(2)} s, RSS ${mbOf(empty.rss.afterReady)} MB, settled ${mbOf(empty.rss.settled)} MB`
)
const bars: Array<string> = []
for (const count of COUNTS) {
  const run = await measure(templates.get(count)!, count, NODE_ARGS)
  const perSession = (key: "afterReady" | "settled") => (run.rss[key] - empty.rss[key]) / count
  console.log(
    `${count} sessions: listening ${seconds(run.listeningMs)}, health ${seconds(run.healthMs)}, ` +
      `all ready ${seconds(run.readyMs)} (CPU ${run.readyCpu.toFixed(2)} s), ` +
      `RSS ${mbOf(run.rss.afterReady)} MB, settled ${mbOf(run.rss.settled)} MB: ` +
      `${perSession("settled").toFixed(0)} KB per idle session settled (${perSession("afterReady").toFixed(0)} KB just after ready); load ${load()}`
  )
  bars.push(bar(`${count} sessions: health answering within ${HEALTH_BAR_MS / 1000} s of start`, run.healthMs <= HEALTH_BAR_MS, seconds(run.healthMs)))
  const readyBar = READY_BAR_MS.get(count)
  if (readyBar !== undefined) {
    bars.push(bar(`${count} sessions: all ready within ${readyBar / 1000} s of start`, run.readyMs <= readyBar, seconds(run.readyMs)))
  }
  const settled = perSession("settled")
  bars.push(bar(`${count} sessions: ≤ ${RSS_BAR_KB} KB of RSS per idle session (settled)`, settled <= RSS_BAR_KB, `${settled.toFixed(0)} KB`))
}
console.log(["", ...bars].join("\n"))
