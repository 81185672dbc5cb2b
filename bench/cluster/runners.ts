/**
 * The runners (`node dist/main.js`, each with its data dir and log file in the round's folder),
 * and the benchmark's cleanup: the runners, Postgres, Redis and the temp dir are stopped or
 * removed by `stopEverything` at the end, and on SIGINT/SIGTERM/SIGHUP or exit by ../lib/processes.ts.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { gatewayEnv, mainScript } from "../../test/support/gatewayEnv.js"
import type { RunningServer } from "../../test/support/servers/common.js"
import { cleanUpAtExit, killAllServers, type ServerProcess, startServer } from "../lib/processes.js"
import { API_KEY, log, LOG_LEVEL } from "./settings.js"

/** The benchmark's temp dir: one folder per round. */
export const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-cluster-"))
cleanUpAtExit(() => fs.rmSync(workDir, { recursive: true, force: true }))

const servers: Array<RunningServer> = []

/** Postgres or Redis: stopped with everything else. */
export const stopAtTheEnd = (server: RunningServer) => {
  servers.push(server)
  cleanUpAtExit(server.stopNow)
}

/** SIGKILLs the runners still running and waits for them, stops Postgres and Redis, removes the temp dir. */
export const stopEverything = async () => {
  await killAllServers()
  await Promise.all(servers.splice(0).map((server) => server.stop().catch((error) => log(`stopping ${server.describe}: ${error}`))))
  fs.rmSync(workDir, { recursive: true, force: true })
}

/**
 * Runs a cluster benchmark's `main` and exits: code 1 when it could not run (its figures are not
 * to be trusted), everything stopped in any case, after `beforeStop` (e.g. keeping the logs).
 */
export const runBenchmark = async (main: () => Promise<void>, beforeStop: () => void = () => undefined): Promise<never> => {
  let exitCode = 0
  try {
    await main()
  } catch (error) {
    console.error(`\nBENCH FAILED: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
    exitCode = 1
  } finally {
    beforeStop()
    await stopEverything()
  }
  process.exit(exitCode)
}

export type Runner = ServerProcess

/** Spawns a runner in `dir` and resolves once it printed `Listening on …` (30 s at most). */
export const startRunner = (name: string, dir: string, env: Record<string, string>): Promise<Runner> => {
  const dataDir = path.join(dir, name)
  fs.mkdirSync(dataDir, { recursive: true })
  return startServer({
    name,
    script: mainScript,
    env: gatewayEnv({ DATA_DIR: dataDir, API_KEY, LOG_LEVEL, ...env }),
    logFile: path.join(dir, `${name}.log`)
  })
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
