/**
 * Switchboard as the send benchmarks run it: `node dist/main.js` in a process of its own, the
 * sandbox engine, pacing and rate limits off, one sandbox session `ready`, and send-text aimed at
 * a phone no sandbox session owns and that is no echo contact, so that a message goes `sent` and
 * stays there.
 */
import { randomBytes } from "node:crypto"
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { gatewayEnv, mainScript } from "../../test/support/gatewayEnv.js"
import { type ServerProcess, startServer } from "./processes.js"
import { since } from "./report.js"
import type { Drain } from "./storeReader.js"

export const API_KEY = `sb_bench_${randomBytes(16).toString("hex")}`
export const SEND_TEXT = { chatId: "447700900123@c.us", text: "Benchmark message: hello from autocannon" }
export const SEND_BODY = JSON.stringify(SEND_TEXT)
/** The load's headers: the key, so that the gateway's auth runs as in production. */
export const SEND_HEADERS = { "x-api-key": API_KEY }

export interface Switchboard {
  readonly process: ServerProcess
  readonly databaseUrl: string
  readonly sessionId: string
  /** POST send-text's full URL for the session. */
  readonly sendUrl: string
}

class BenchError extends Error {}

const call = async (base: string, method: string, route: string, body?: unknown) => {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { accept: "application/json", "content-type": "application/json", "x-api-key": API_KEY },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await response.text()
  if (!response.ok) throw new BenchError(`${method} ${route}: HTTP ${response.status}: ${text.slice(0, 500)}`)
  return JSON.parse(text) as Record<string, unknown>
}

/**
 * Starts the gateway in `dir` (its data dir and log file) on `databaseUrl` (default: SQLite in the
 * data dir), creates and starts one sandbox session, waits until it is `ready` and sends one
 * message by hand, so that a wrong route or key fails with its body rather than a count.
 */
export const startSwitchboard = async (
  dir: string,
  options: { databaseUrl?: string; logLevel?: string; /** the gateway script (default BENCH_MAIN, else dist/bundle/main.js) */ script?: string } = {}
): Promise<Switchboard> => {
  const dataDir = path.join(dir, "switchboard-data")
  const databaseUrl = options.databaseUrl ?? `sqlite:${path.join(dataDir, "switchboard.db")}`
  const server = await startServer({
    name: "switchboard",
    script: options.script ?? process.env["BENCH_MAIN"] ?? mainScript,
    nodeOptions: (process.env["BENCH_NODE_ARGS"] ?? "").split(" ").filter((arg) => arg !== ""),
    env: gatewayEnv({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, API_KEY, LOG_LEVEL: options.logLevel ?? "Warn", LOG_FORMAT: "pretty" }),
    logFile: path.join(dir, "switchboard.log"),
    killAfterMs: 40_000 // its SHUTDOWN_TIMEOUT_MS is 30 s: a SIGKILL before that says nothing
  })
  try {
    const created = await call(server.url, "POST", "/api/sessions", { name: "bench" })
    const sessionId = created["id"]
    if (typeof sessionId !== "string") throw new BenchError(`POST /api/sessions returned no id: ${JSON.stringify(created)}`)
    await call(server.url, "POST", `/api/sessions/${sessionId}/start`)
    const deadline = Date.now() + 30_000
    let status: unknown
    while (status !== "ready") {
      if (Date.now() > deadline || status === "failed" || status === "logged_out") {
        throw new BenchError(`session ${sessionId} did not become ready within 30 s (last status: ${JSON.stringify(status)})`)
      }
      await sleep(50)
      status = (await call(server.url, "GET", `/api/sessions/${sessionId}`))["status"]
    }
    const sendUrl = `${server.url}/api/sessions/${sessionId}/messages/send-text`
    const probe = await call(server.url, "POST", `/api/sessions/${sessionId}/messages/send-text`, SEND_TEXT)
    if (probe["status"] !== "pending" || typeof probe["messageId"] !== "string") {
      throw new BenchError(`send-text answered an unexpected body: ${JSON.stringify(probe).slice(0, 300)}`)
    }
    return { process: server, databaseUrl, sessionId, sendUrl }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/** The gateway's CPU seconds per second while idle with its session ready, over `ms`. */
export const idleCpuPerSecond = async (server: ServerProcess, ms = 2000) => {
  const from = server.cpuSeconds()
  await sleep(ms)
  return (server.cpuSeconds() - from) / (ms / 1000)
}

/**
 * The gateway's CPU seconds from `from` until the last message went out: less its idle CPU
 * (`idlePerSecond`) over the quiet time the drain waited after the last change.
 */
export const cpuUntilLastSent = (server: ServerProcess, idlePerSecond: number, from: number, drainStart: number, drain: Drain) =>
  server.cpuSeconds() - from - idlePerSecond * (since(drainStart) - drain.seconds)

/** The gateway's stop: SIGTERM must end it cleanly (code 0), otherwise the run is broken. */
export const stopSwitchboard = async (switchboard: Switchboard): Promise<string | undefined> => {
  const started = performance.now()
  const how = await switchboard.process.stop()
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  console.log(`[bench] switchboard stopped after SIGTERM in ${seconds} s (${how})`)
  return how === "code 0" ? undefined : `switchboard did not exit cleanly after SIGTERM (${how} after ${seconds} s); its log: ${switchboard.process.logFile}`
}
