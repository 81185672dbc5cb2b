/**
 * The runners (`node dist/main.js`, each with its data dir and log file in the round's folder),
 * and the benchmark's cleanup: the runners, Postgres, Redis and the temp dir are stopped or
 * removed by `stopEverything` at the end, on SIGINT/SIGTERM/SIGHUP, and (best effort) on exit.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { gatewayEnv, mainScript } from "../../test/support/gatewayEnv.js"
import type { RunningServer } from "../../test/support/servers/common.js"
import { API_KEY, log, LOG_LEVEL } from "./settings.js"

/** The benchmark's temp dir: one folder per round. */
export const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-cluster-"))

const servers: Array<RunningServer> = []
const live = new Set<ChildProcess>()
const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** Postgres or Redis: stopped with everything else. */
export const stopAtTheEnd = (server: RunningServer) => void servers.push(server)

const stopEverythingNow = () => {
  for (const child of live) if (isRunning(child)) child.kill("SIGKILL")
  for (const server of servers.splice(0)) server.stopNow()
  fs.rmSync(workDir, { recursive: true, force: true })
}
process.once("exit", stopEverythingNow)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    console.error(`\n[bench] ${signal}: stopping the runners, Postgres and Redis`)
    stopEverythingNow()
    process.exit(130)
  })
}

/** SIGKILLs the runners still running and waits for them, stops Postgres and Redis, removes the temp dir. */
export const stopEverything = async () => {
  await Promise.all(Array.from(live, (child) => {
    if (isRunning(child)) child.kill("SIGKILL")
    return new Promise((resolve) => (isRunning(child) ? child.once("close", resolve) : resolve(undefined)))
  }))
  await Promise.all(servers.splice(0).map((server) => server.stop().catch((error) => log(`stopping ${server.describe}: ${error}`))))
  fs.rmSync(workDir, { recursive: true, force: true })
}

export interface Runner {
  readonly name: string
  readonly pid: number
  readonly url: string
  readonly logFile: string
  /** The last 200,000 characters it wrote. */
  readonly output: () => string
  /** SIGTERM, SIGKILL after 15 s; resolves with how it ended. */
  readonly stop: () => Promise<string>
}

/** Spawns a runner in `dir` and resolves once it printed `Listening on …` (30 s at most). */
export const startRunner = async (name: string, dir: string, env: Record<string, string>): Promise<Runner> => {
  const dataDir = path.join(dir, name)
  fs.mkdirSync(dataDir, { recursive: true })
  const logFile = path.join(dir, `${name}.log`)
  const child = spawn(process.execPath, [mainScript], {
    env: gatewayEnv({ DATA_DIR: dataDir, API_KEY, LOG_LEVEL, ...env }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  live.add(child)
  const file = fs.createWriteStream(logFile)
  let output = ""
  const capture = (chunk: Buffer) => {
    file.write(chunk)
    output = (output + chunk.toString("utf8")).slice(-200_000)
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
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000)
    const how = await exited
    clearTimeout(timer)
    return how
  }
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("did not print its Listening line within 30 s")), 30_000)
      const onData = () => {
        const match = /Listening on (http:\/\/\S+)/.exec(output)
        if (match === null) return
        clearTimeout(timer)
        child.stdout!.off("data", onData)
        resolve(match[1]!.replace(/\/+$/, ""))
      }
      child.stdout!.on("data", onData)
      child.once("error", reject)
      void exited.then((how) => reject(new Error(`exited during start-up (${how})`)))
    })
    return { name, pid: child.pid!, url, logFile, output: () => output, stop }
  } catch (error) {
    await stop()
    throw new Error(`runner ${name}: ${(error as Error).message}; its output:\n${output.slice(-5_000) || "(none)"}`)
  }
}

/**
 * The warnings and errors in a stopped runner's log (LOG_FORMAT json or pretty): how many
 * lines, then the first five distinct ones with how often each came.
 */
export const warningsIn = (runner: Runner): Array<string> => {
  const lines = fs.readFileSync(runner.logFile, "utf8").split("\n")
    .filter((line) => /"logLevel":"(WARN|ERROR|FATAL)"|level=(WARN|ERROR|FATAL)\b|\b(WARN|ERROR|FATAL)\b/.test(line))
  if (lines.length === 0) return []
  const distinct = new Map<string, number>()
  for (const line of lines) {
    let key = line
    try {
      const parsed = JSON.parse(line) as { message?: unknown; logLevel?: string }
      key = `${parsed.logLevel} ${JSON.stringify(parsed.message)}`
    } catch {
      key = line.replace(/timestamp=\S+ /, "")
    }
    key = key.slice(0, 300)
    distinct.set(key, (distinct.get(key) ?? 0) + 1)
  }
  return [
    `${path.basename(runner.logFile)}: ${lines.length} warning/error line(s)`,
    ...Array.from(distinct).slice(0, 5).map(([line, times]) => `  ${times}× ${line}`)
  ]
}
