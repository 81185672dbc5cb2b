/**
 * The servers a benchmark measures, each a `node <script>` child process of its own (so that the
 * load generator never shares their event loop, and /proc gives each one's CPU): started, known
 * by the URL they print in a `Listening on http://…` line, and all stopped at the end, on
 * SIGINT/SIGTERM/SIGHUP, and (best effort, SIGKILL) when this process exits.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { cpuSeconds, rssKb } from "./proc.js"

const LISTENING = /Listening on (http:\/\/\S+)/
/** Characters of a server's output kept in memory (its log file has all of it). */
const KEPT_OUTPUT = 200_000

export interface ServerProcess {
  readonly name: string
  readonly pid: number
  /** Where it listens, without a trailing slash. */
  readonly url: string
  readonly logFile: string
  /** The last KEPT_OUTPUT characters it wrote. */
  readonly output: () => string
  /** CPU seconds it has used so far (NaN once it is gone). */
  readonly cpuSeconds: () => number
  readonly rssKb: () => number | undefined
  /** SIGTERM, SIGKILL after `killAfterMs`; resolves with how it ended, e.g. "code 0" or "signal SIGKILL". */
  readonly stop: () => Promise<string>
}

/** Processes that are not to outlive the benchmark, and what else to stop (Postgres). */
const live = new Set<ChildProcess>()
const alsoAtExit: Array<() => void> = []
const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** Registers a synchronous last-resort cleanup (a server that is not a child of ours). */
export const cleanUpAtExit = (stopNow: () => void) => void alsoAtExit.push(stopNow)

const stopEverythingNow = () => {
  for (const child of live) if (isRunning(child)) child.kill("SIGKILL")
  for (const stopNow of alsoAtExit.splice(0)) stopNow()
}
process.once("exit", stopEverythingNow)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    console.error(`\n[bench] ${signal}: stopping the servers`)
    stopEverythingNow()
    process.exit(130)
  })
}

/** SIGKILLs every server still running and waits until they are gone. */
export const killAllServers = () =>
  Promise.all(Array.from(live, (child) => {
    if (isRunning(child)) child.kill("SIGKILL")
    return new Promise((resolve) => (isRunning(child) ? child.once("close", resolve) : resolve(undefined)))
  }))

export interface StartOptions {
  readonly name: string
  /** The script `node` runs, and its arguments. */
  readonly script: string
  readonly args?: ReadonlyArray<string>
  readonly env: Record<string, string>
  /** Where its stdout and stderr go. */
  readonly logFile: string
  readonly nodeOptions?: ReadonlyArray<string>
  readonly startTimeoutMs?: number
  /** How long `stop` waits after SIGTERM before SIGKILL (default 15 s): longer than its own shutdown limit. */
  readonly killAfterMs?: number
}

/** Spawns `node script` and resolves once it printed `Listening on …`; rejects with its output otherwise. */
export const startServer = async (options: StartOptions): Promise<ServerProcess> => {
  if (!fs.existsSync(options.script)) throw new Error(`${options.script} does not exist (for the gateway: run \`npm run build\` first)`)
  const child = spawn(process.execPath, [...(options.nodeOptions ?? []), options.script, ...(options.args ?? [])], {
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  live.add(child)
  const file = fs.createWriteStream(options.logFile)
  let output = ""
  const capture = (chunk: Buffer) => {
    file.write(chunk)
    output = (output + chunk.toString("utf8")).slice(-KEPT_OUTPUT)
  }
  child.stdout!.on("data", capture)
  child.stderr!.on("data", capture)
  const exited = new Promise<string>((resolve) => {
    child.once("close", (code, signal) => {
      live.delete(child)
      file.end(() => resolve(signal === null ? `code ${code}` : `signal ${signal}`))
    })
  })
  const stop = async () => {
    if (isRunning(child)) child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), options.killAfterMs ?? 15_000)
    const how = await exited
    clearTimeout(timer)
    return how
  }
  const timeoutMs = options.startTimeoutMs ?? 30_000
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`did not print its Listening line within ${timeoutMs / 1000} s`)), timeoutMs)
      const onData = () => {
        const match = LISTENING.exec(output)
        if (match === null) return
        clearTimeout(timer)
        child.stdout!.off("data", onData)
        resolve(match[1]!.replace(/\/+$/, ""))
      }
      child.stdout!.on("data", onData)
      child.once("error", reject)
      void exited.then((how) => reject(new Error(`exited during start-up (${how})`)))
    })
    const pid = child.pid!
    return { name: options.name, pid, url, logFile: options.logFile, output: () => output, cpuSeconds: () => cpuSeconds(pid), rssKb: () => rssKb(pid), stop }
  } catch (error) {
    await stop()
    throw new Error(`${options.name}: ${(error as Error).message}; its output:\n${output.slice(-5_000) || "(none)"}`)
  }
}
