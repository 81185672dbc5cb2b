/**
 * The cluster benchmark's settings, read once from the environment (main.ts says what they
 * mean), and the constants and small helpers its modules share.
 */
import { randomBytes } from "node:crypto"

const numberFromEnv = (name: string, fallback: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number ≥ 0, got ${JSON.stringify(raw)}`)
  return n
}

/** How many runners with CLUSTER=on, or "off": one gateway with CLUSTER=off. */
export type RunnerCount = number | "off"

export const RUNNERS: ReadonlyArray<RunnerCount> = (process.env["BENCH_RUNNERS"] || "1,2,3").split(",").map((item) => {
  const value = item.trim()
  if (value === "off") return "off"
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_RUNNERS: "${value}" is neither a runner count nor "off"`)
  return n
})
export const SESSIONS = Math.max(1, Math.round(numberFromEnv("BENCH_SESSIONS", 30)))
export const DURATION = numberFromEnv("BENCH_DURATION", 15)
export const CONNECTIONS = Math.max(1, Math.round(numberFromEnv("BENCH_CONNECTIONS", 20)))

/** Seconds of send load before the measured window. */
export const WARMUP = 2
/** Seconds after the load at which the messages that went out are counted. */
export const SETTLE = 5
/** Seconds of CPU measured with the sessions ready and no requests. */
export const IDLE = 3
/** Seconds after SETTLE to wait at most for the rest of the messages to go out. */
export const DRAIN_MAX = 120
/** The runners' log level: the warnings and errors they log are listed per round. */
export const LOG_LEVEL = "Warn"

export const API_KEY = `sb_bench_${randomBytes(16).toString("hex")}`
/** To a phone no sandbox session owns and no echo contact: a send goes `sent` and stays there. */
export const SEND_BODY = JSON.stringify({ chatId: "447700900123@c.us", text: "Cluster benchmark: hello" })

export const log = (line: string) => console.log(`[bench] ${line}`)
/** Seconds since `start` (a `performance.now()`). */
export const since = (start: number) => (performance.now() - start) / 1000
