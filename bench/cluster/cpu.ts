/**
 * CPU accounting from /proc: the CPU seconds so far of the runners, Postgres (the postmaster
 * and its backends), Redis, this process (the load generator) and the whole machine, and what
 * each spent between two such samples.
 */
import * as fs from "node:fs"

const CLOCK_TICKS = 100 // USER_HZ on Linux

interface ProcStat {
  readonly ppid: number
  /** utime + stime, seconds */
  readonly own: number
  /** cutime + cstime (children waited for), seconds */
  readonly children: number
}

const procStat = (pid: number): ProcStat | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return {
      ppid: Number(fields[1]),
      own: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS,
      children: (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS
    }
  } catch {
    return undefined
  }
}

/** CPU seconds the whole machine spent busy (all cores), from /proc/stat. */
const machineBusySeconds = () => {
  try {
    // cpu  user nice system idle iowait irq softirq steal: everything but idle and iowait
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    return fields.reduce((sum, ticks, i) => (i === 3 || i === 4 ? sum : sum + ticks), 0) / CLOCK_TICKS
  } catch {
    return NaN
  }
}

const allPids = () => fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number)

const cmdline = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean)
  } catch {
    return []
  }
}

/** The postmaster listening on `port` (its argv holds `-p <port>`). */
export const postmasterPid = (port: number) =>
  allPids().find((pid) => {
    const argv = cmdline(pid)
    const p = argv.indexOf("-p")
    return argv[0]?.endsWith("/postgres") === true && p >= 0 && argv[p + 1] === String(port)
  })

/** redis-server renames its process to `redis-server 127.0.0.1:<port>`. */
export const redisServerPid = (port: number) =>
  allPids().find((pid) => cmdline(pid).join(" ").includes(`redis-server 127.0.0.1:${port}`))

/** CPU seconds so far of a process, its reaped children and (with `tree`) its live children. */
const cpuSeconds = (pid: number | undefined, tree = false): number => {
  if (pid === undefined) return NaN
  const self = procStat(pid)
  if (self === undefined) return NaN
  let total = self.own + self.children
  if (tree) {
    for (const child of allPids()) {
      const stat = procStat(child)
      if (stat?.ppid === pid) total += stat.own
    }
  }
  return total
}

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
