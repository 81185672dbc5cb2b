import { type ChildProcess, execFile, type ExecFileOptions } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

/** Helpers shared by the test servers (run in vitest's main process, from the globalSetup). */

export const log = (message: string) => console.log(`[test servers] ${message}`)

export const isRoot = () => process.getuid?.() === 0

/** Seconds since `start`, for the timing lines. */
export const secondsSince = (start: number) => `${((performance.now() - start) / 1000).toFixed(1)} s`

/** A port nobody listens on right now (the server that takes it may still lose a race: callers retry). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A fresh directory for one server, removed by its `stop`. */
export const serverDir = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `switchboard-${name}-`))

export const removeDir = (dir: string) => fs.rmSync(dir, { recursive: true, force: true })

export interface RunResult {
  readonly stdout: string
  readonly stderr: string
}

/** Runs a program to its end; rejects with its output when it fails. */
export const run = (file: string, args: ReadonlyArray<string>, options: ExecFileOptions = {}) =>
  new Promise<RunResult>((resolve, reject) => {
    execFile(file, args, { maxBuffer: 64 * 1024 * 1024, encoding: "utf8", ...options }, (error, stdout, stderr) => {
      const result = { stdout: String(stdout), stderr: String(stderr) }
      if (error) {
        const output = `${result.stdout}\n${result.stderr}`.trim().split("\n").slice(-15).join("\n")
        reject(new Error(`${[file, ...args].join(" ")} failed: ${error.message}${output ? `\n${output}` : ""}`))
      } else {
        resolve(result)
      }
    })
  })

/** The first of these files that exists and is executable. */
export const firstExecutable = (candidates: ReadonlyArray<string>): string | undefined =>
  candidates.find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK)
      return fs.statSync(file).isFile()
    } catch {
      return false
    }
  })

/** `name` on the PATH, if it is there. */
export const onPath = (name: string): string | undefined =>
  firstExecutable((process.env["PATH"] ?? "").split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, name)))

/** Resolves once something accepts TCP connections on the port, or rejects after `timeoutMs`. */
export const waitForPort = async (port: number, timeoutMs: number, child?: ChildProcess) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`exited with code ${child.exitCode} before listening`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: "127.0.0.1", port })
      socket.once("connect", () => {
        socket.destroy()
        resolve(true)
      })
      socket.once("error", () => resolve(false))
    })
    if (open) return
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** One running server: what the tests get to know of it, and how to stop it. */
export interface RunningServer {
  /** The environment variables the test workers read. */
  readonly env: Readonly<Record<string, string>>
  readonly describe: string
  readonly stop: () => Promise<void>
  /** Best effort, synchronous: for when vitest's own process is going away. */
  readonly stopNow: () => void
  /** Stops the server but keeps its data, to start it again with `resume` (outage tests). */
  readonly pause?: () => Promise<void>
  readonly resume?: () => Promise<void>
}
