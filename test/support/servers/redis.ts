import { spawn } from "node:child_process"
import { firstExecutable, freePort, log, onPath, removeDir, run, type RunningServer, secondsSince, serverDir, waitForPort } from "./common.js"

/**
 * A throwaway Redis: `redis-server` on 127.0.0.1 and a free port, its working directory a
 * temporary one, no persistence (no RDB snapshots, no AOF). A child of vitest's process.
 */

export const findRedisServer = (): string | undefined =>
  firstExecutable([process.env["REDIS_SERVER_BIN"] ?? "", "/usr/bin/redis-server"].filter(Boolean)) ?? onPath("redis-server")

export const startRedis = async (binary: string): Promise<RunningServer> => {
  const dir = serverDir("redis")
  const started = performance.now()
  const { stdout } = await run(binary, ["--version"])
  const version = /v=(\S+)/.exec(stdout)?.[1] ?? stdout.trim()
  let lastError: unknown
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort()
    const child = spawn(binary, [
      "--port", String(port), "--bind", "127.0.0.1", "--dir", dir,
      "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"
    ], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += String(chunk)))
    child.stderr.on("data", (chunk) => (output += String(chunk)))
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    try {
      await waitForPort(port, 10_000, child)
    } catch (error) {
      child.kill("SIGKILL")
      await exited
      lastError = new Error(`redis-server did not start: ${String(error)}\n${output.trim().split("\n").slice(-10).join("\n")}`)
      continue
    }
    log(`redis ${version} on 127.0.0.1:${port} (start ${secondsSince(started)})`)
    const url = `redis://127.0.0.1:${port}`
    return {
      env: { TEST_REDIS_URL: url },
      describe: `redis ${version} at ${url}`,
      stop: async () => {
        if (child.exitCode === null) {
          child.kill("SIGTERM")
          await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
          if (child.exitCode === null) child.kill("SIGKILL")
        }
        removeDir(dir)
      },
      stopNow: () => {
        if (child.exitCode === null) child.kill("SIGKILL")
        removeDir(dir)
      }
    }
  }
  removeDir(dir)
  throw lastError
}
