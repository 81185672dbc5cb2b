/**
 * CPU accounting for the cluster rounds: the CPU seconds so far of the runners, Postgres (the
 * postmaster and its backends), Redis, this process (the load generator) and the whole machine,
 * and what each spent between two such samples. The /proc reading is ../lib/proc.ts.
 */
import { cpuSeconds, machineBusySeconds } from "../lib/proc.js"

export interface WatchedPids {
  readonly runners: ReadonlyArray<number>
  readonly postgres: number | undefined
  readonly redis: number | undefined
}

export interface CpuSample {
  readonly runners: number
  readonly postgres: number
  readonly redis: number
  readonly bench: number
  readonly machine: number
  readonly at: number
}

/** CPU seconds so far of the benchmark's processes, and of the whole machine. */
export const sampleCpu = (pids: WatchedPids): CpuSample => {
  const usage = process.cpuUsage()
  return {
    runners: pids.runners.reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    postgres: cpuSeconds(pids.postgres, true),
    redis: cpuSeconds(pids.redis),
    bench: (usage.user + usage.system) / 1e6,
    machine: machineBusySeconds(),
    at: performance.now()
  }
}

/** CPU seconds spent by each over `seconds` of wall time; `others`: the rest of the machine. */
export interface CpuSpent {
  readonly seconds: number
  readonly runners: number
  readonly postgres: number
  readonly redis: number
  /** The load generator (this process). */
  readonly bench: number
  readonly others: number
}

export const cpuBetween = (from: CpuSample, to: CpuSample): CpuSpent => {
  const runners = to.runners - from.runners
  const postgres = to.postgres - from.postgres
  const redis = to.redis - from.redis
  const bench = to.bench - from.bench
  return { seconds: (to.at - from.at) / 1000, runners, postgres, redis, bench, others: to.machine - from.machine - runners - postgres - redis - bench }
}

const served = (c: CpuSpent) => c.runners + c.postgres + c.redis

/**
 * CPU milliseconds per send, all of it: `full` runs from the start of the load until the last
 * message had gone out (so the sending, acknowledging and events of the backlog count too),
 * less what the same processes spend `idle` over that time.
 */
export const cpuMsPerSend = (idle: CpuSpent, full: CpuSpent | undefined, sends: number) =>
  full === undefined ? NaN : ((served(full) - (served(idle) / idle.seconds) * full.seconds) * 1000) / sends
