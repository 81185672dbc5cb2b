/**
 * What Linux's /proc says about a process or the machine: CPU seconds, resident memory, and
 * finding the Postgres and Redis servers by their command lines. Every benchmark reads CPU from
 * here, so that "CPU per request" means the same thing in each of them.
 */
import * as fs from "node:fs"
import * as os from "node:os"

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

const allPids = () => fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number)

const cmdline = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean)
  } catch {
    return []
  }
}

/**
 * CPU seconds (user + system) so far of a process and its reaped children, and with `tree` its
 * live children too (Postgres: the postmaster and its backends). NaN when it is gone or unknown.
 */
export const cpuSeconds = (pid: number | undefined, tree = false): number => {
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

/** Resident set size in kB, from /proc/<pid>/status; undefined when it is gone. */
export const rssKb = (pid: number): number | undefined => {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

/** CPU seconds the whole machine spent busy (all cores), from /proc/stat. */
export const machineBusySeconds = () => {
  try {
    // cpu  user nice system idle iowait irq softirq steal: everything but idle and iowait
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    return fields.reduce((sum, ticks, i) => (i === 3 || i === 4 ? sum : sum + ticks), 0) / CLOCK_TICKS
  } catch {
    return NaN
  }
}

/** "load average 1.23 / 1.10 / 0.95 (1/5/15 min) on 2 CPUs": what else the machine was doing. */
export const machineLoad = () =>
  `load average ${os.loadavg().map((n) => n.toFixed(2)).join(" / ")} (1/5/15 min) on ${os.cpus().length} CPU(s)`

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
