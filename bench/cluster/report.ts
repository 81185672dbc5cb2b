/**
 * The benchmark's report: a table with a row per round (ratios against the round with 1
 * runner), what its columns mean, then the details of each round.
 */
import * as os from "node:os"
import { cpuMsPerSend, type CpuSpent } from "./cpu.js"
import { drainedText, type Round } from "./round.js"
import { CONNECTIONS, DURATION, SESSIONS, SETTLE, WARMUP } from "./settings.js"

const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  const line = (r: ReadonlyArray<string>) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("-|-"), ...rows.slice(1).map(line)].join("\n")
}
const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const ratio = (a: number, b: number | undefined) => (b !== undefined && b > 0 ? `${(a / b).toFixed(2)}×` : "n/a")
const pct = (cores: number) => `${fixed(cores * 100, 1)}%`
const ms = (seconds: number, sends: number) => (Number.isFinite(seconds) && sends > 0 ? ((seconds * 1000) / sends).toFixed(2) : "n/a")

export const report = (rounds: ReadonlyArray<Round>) => {
  const base = rounds.find((r) => r.label === "1")
  const cores = os.cpus().length
  const share = (c: CpuSpent | undefined) => (c === undefined ? "n/a" : `${fixed((c.others / (c.seconds * cores)) * 100, 0)}%`)
  console.log(`\nCluster mode, sandbox engine, ${SESSIONS} sessions, ${CONNECTIONS} connections, ${DURATION} s measured (+${WARMUP} s warm-up), node ${process.version}\n`)
  console.log(table([
    ["runners", "start-up s", "sessions/s", "ratio", "sends/s", "ratio", "p50 ms", "p99 ms", `out ≤${SETTLE}s`, "all out", "CPU ms/send", "other CPU"],
    ...rounds.map((r) => [
      r.label,
      fixed(r.startupSeconds, 2),
      fixed(SESSIONS / r.startupSeconds, 1),
      ratio(SESSIONS / r.startupSeconds, base && SESSIONS / base.startupSeconds),
      fixed(r.sendsPerSecond, 0),
      ratio(r.sendsPerSecond, base?.sendsPerSecond),
      fixed(r.p50, 0),
      fixed(r.p99, 0),
      `${r.storedInDb > 0 ? ((r.goneOut / r.storedInDb) * 100).toFixed(1) : "n/a"}%`,
      r.drainedAfter === undefined ? "NO" : `+${r.drainedAfter.toFixed(1)} s`,
      fixed(cpuMsPerSend(r.idle, r.full, r.accepted), 1),
      share(r.window)
    ])
  ]))
  console.log(`
  start-up    POST /api/sessions {autoStart: true} ×${SESSIONS} (round-robin over the runners, all at once) until all are ready
  sends/s     send-text answered 2xx per second during the measured window (a 2xx means stored and queued)
  ratio       against 1 runner (CLUSTER=on)
  out ≤${SETTLE}s     share of all accepted messages (warm-up included) with status sent or beyond ${SETTLE} s after the load stopped
  all out     when the last accepted message had left \`pending\`, after the load stopped
  CPU ms/send CPU of the runners + Postgres + Redis from the start of the warm-up until all had gone out, less
              their idle CPU over that time, per accepted send (the load generator's own CPU not included)
  other CPU   share of the machine's CPU that processes other than the benchmark's used during the
              measured window: well above 0 % means the figures of that row are low and noisy

NOTE: all runners, Postgres, Redis and the load generator share this one ${cores}-core machine
(${os.cpus()[0]?.model ?? "unknown CPU"}): the ratios show the cluster's overhead (commands crossing
runners, events fanned out to every runner, more processes on the same cores), not horizontal scaling.`)

  console.log("\nDetails per round:")
  for (const r of rounds) {
    const refused = Object.entries(r.refused).map(([k, v]) => `${v} ${k}`).join(", ")
    const idle = (cpu: number) => pct(cpu / r.idle.seconds)
    console.log(`  ${r.label} runner(s): all listening ${r.listenSeconds.toFixed(1)} s after the first was spawned; shards per runner ${r.shards}; ` +
      `sessions created (POSTs answered) in ${r.createSeconds.toFixed(2)} s`)
    console.log(`    messages: ${r.accepted} accepted (${r.measuredOk} in the window), ${r.storedInDb} stored` +
      `${r.storedInDb !== r.accepted ? ` (${r.storedInDb - r.accepted > 0 ? "+" : ""}${r.storedInDb - r.accepted} vs accepted)` : ""}, ` +
      `through the API ${r.storedViaApi}${r.mismatched > 0 ? ` (${r.mismatched} session(s) differ from what they accepted)` : ""}; ` +
      `${r.goneOut} gone out, ${r.pendingAtSettle} pending, ${r.failed} failed at +${r.countedAfter.toFixed(1)} s; ${drainedText(r)}` +
      (refused ? `; refused: ${refused}` : "; no refusals"))
    console.log(`    CPU in the ${fixed(r.window.seconds, 1)} s window: runners ${fixed(r.window.runners, 1)} s, Postgres ${fixed(r.window.postgres, 1)} s, ` +
      `Redis ${fixed(r.window.redis, 1)} s, load generator ${fixed(r.window.bench, 1)} s, other processes ${fixed(r.window.others, 1)} s`)
    if (r.full !== undefined) {
      console.log(`    CPU until all went out (${fixed(r.full.seconds, 1)} s): runners ${fixed(r.full.runners, 1)} s, Postgres ${fixed(r.full.postgres, 1)} s, ` +
        `Redis ${fixed(r.full.redis, 1)} s → ${ms(r.full.runners, r.accepted)} ms (runners) + ${ms(r.full.postgres, r.accepted)} ms (Postgres) per send ` +
        `before taking off the idle CPU (other processes: ${share(r.full)} of the machine)`)
    }
    console.log(`    CPU idle (sessions ready, no requests): runners ${idle(r.idle.runners)}, Postgres ${idle(r.idle.postgres)}, Redis ${idle(r.idle.redis)} of a core`)
    console.log(`    exits after SIGTERM: ${r.exits.join(", ")}`)
    for (const line of r.warnings) console.log(`    ${line}`)
  }
}
