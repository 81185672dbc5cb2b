import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import { afterAll } from "vitest"
import { makeCall, TEST_KEY, type TestGateway } from "./gateway.js"
import { gatewayEnv, mainScript } from "./gatewayEnv.js"

/**
 * The gateway as an operator runs it: `node dist/bundle/main.js` in a child process, configured by
 * environment variables only. For tests of what only a real process shows (signals, restarts
 * on the same DATA_DIR, the bootstrap key, what ends up in the logs).
 */

export { mainScript }

export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface GatewayProcess {
  readonly baseUrl: string
  readonly dataDir: string
  readonly pid: number
  /** fetch against the gateway; the key defaults to the process's API_KEY (or TEST_KEY). */
  readonly call: TestGateway["call"]
  readonly signal: (name: NodeJS.Signals) => void
  /** Settles when the process has exited and its stdout/stderr are closed. */
  readonly exited: Promise<ProcessExit>
  /** Everything captured so far. */
  readonly stdout: () => string
  readonly stderr: () => string
  readonly output: () => string
  /** SIGKILLs the process unless it has already exited, and waits for it. */
  readonly kill: () => Promise<ProcessExit>
}

export interface SpawnOptions {
  readonly dataDir: string
  /** The gateway's script; default dist/bundle/main.js (another: an installed package's `switchboard`). */
  readonly script?: string
  /** Extra or overriding variables; `undefined` removes one. */
  readonly env?: Record<string, string | undefined>
  /** The key `call` sends by default (otherwise API_KEY from `env`, or TEST_KEY). */
  readonly key?: string
  readonly startTimeoutMs?: number
}

const live = new Set<ChildProcess>()

const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

// Last resort if the worker goes away without running afterAll: no gateway outlives it.
process.once("exit", () => {
  for (const child of live) if (isRunning(child)) child.kill("SIGKILL")
})

/** SIGKILLs every gateway process still running and waits until they are gone. */
export const killAllGateways = async () => {
  await Promise.all(Array.from(live, async (child) => {
    if (isRunning(child)) {
      const closed = new Promise((resolve) => child.once("close", resolve))
      child.kill("SIGKILL")
      await closed
    }
    live.delete(child)
  }))
}

/** Registers the cleanup for the calling test file; returns the spawner. */
export const useGatewayProcesses = () => {
  afterAll(killAllGateways, 15_000)
  return spawnGateway
}

/** Starts `node dist/bundle/main.js` on a free port (`PORT=0`) and resolves once it printed `Listening on …`. */
export const spawnGateway = (options: SpawnOptions): Promise<GatewayProcess> => {
  const script = options.script ?? mainScript
  if (!fs.existsSync(script)) {
    throw new Error(`${script} is missing: run \`npm run build\` first (\`npm test\` builds before running vitest)`)
  }
  return startOnce(options)
}

const startOnce = (options: SpawnOptions): Promise<GatewayProcess> => {
  // No gateway setting is inherited from the environment of the test run.
  const env = gatewayEnv({ DATA_DIR: options.dataDir, ...options.env })

  const child = spawn(process.execPath, [options.script ?? mainScript], { env, stdio: ["ignore", "pipe", "pipe"] })
  live.add(child)
  let stdout = ""
  let stderr = ""
  let combined = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk
    combined += chunk
  })
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk
    combined += chunk
  })
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once("close", (code, signal) => {
      live.delete(child)
      resolve({ code, signal })
    })
  })
  const kill = async () => {
    if (isRunning(child)) child.kill("SIGKILL")
    return exited
  }
  // Starting takes ~1 s alone; on a loaded 2-core machine (the whole suite beside it) it has taken over 10 s.
  const timeoutMs = options.startTimeoutMs ?? 20_000
  const key = options.key ?? options.env?.API_KEY ?? TEST_KEY

  return new Promise<GatewayProcess>((resolve, reject) => {
    let settled = false
    const fail = (message: string) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      void kill().then(() =>
        reject(new Error(`${message}\n--- gateway output (pid ${child.pid}) ---\n${combined}`))
      )
    }
    const timer = setTimeout(() => fail(`the gateway did not log "Listening on …" within ${timeoutMs} ms`), timeoutMs)
    const onData = () => {
      const match = /Listening on (http:\/\/\S+)/.exec(stdout)
      if (match === null || settled) return
      settled = true
      clearTimeout(timer)
      child.stdout!.off("data", onData)
      const baseUrl = match[1]!
      const call = makeCall(baseUrl)
      resolve({
        baseUrl,
        dataDir: options.dataDir,
        pid: child.pid!,
        call: (method, route, callOptions = {}) =>
          call(method, route, { ...callOptions, key: callOptions.key === undefined ? key : callOptions.key }),
        signal: (name) => void child.kill(name),
        exited,
        stdout: () => stdout,
        stderr: () => stderr,
        output: () => combined,
        kill
      })
    }
    child.stdout!.on("data", onData)
    child.once("error", (error) => fail(`could not spawn the gateway: ${error.message}`))
    void exited.then(({ code, signal }) =>
      fail(`the gateway exited (code ${code}, signal ${signal}) before it was listening`)
    )
  })
}
