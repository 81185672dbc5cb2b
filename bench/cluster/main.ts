/**
 * Cluster mode (`CLUSTER=on`) on this machine: the same workload through 1, 2 and 3 runners
 * (`node dist/main.js` processes) over one Postgres and one Redis, all on loopback.
 * `npm run bench:cluster` (builds first; `npx vite-node bench/cluster/main.ts` with a fresh dist/).
 *
 * For each runner count, on a fresh database (and a Redis database of its own):
 *   1. start-up: N sessions created with `autoStart: true` (POST /api/sessions, round-robin over
 *      the runners' APIs, all at once) until all N are `ready`;
 *   2. sends: POST /api/sessions/{id}/messages/send-text from BENCH_CONNECTIONS keep-alive
 *      connections spread over the runners' APIs, each request to the next session in turn (so
 *      with k runners, (k-1)/k of the sends cross to the runner that hosts the session),
 *      2 s of warm-up, then BENCH_DURATION s measured; then how many of the accepted messages
 *      had gone out (status sent or beyond) 5 s after the load stopped, and when the last one
 *      did (read from the Store with psql, so watching costs the runners nothing).
 *
 * It also reads, from /proc, the CPU the runners, Postgres and Redis spend: idle (sessions ready, no
 * requests), during the measured window, and from the start of the load until the last accepted
 * message went out (per send, less the idle CPU), and what the rest of the machine used meanwhile.
 *
 * The figures are printed, never asserted: the exit code is 1 only when the benchmark could not
 * run (a runner did not start, sessions never became ready, nothing was accepted).
 *
 * Environment:
 *   BENCH_RUNNERS      runner counts, comma-separated (default "1,2,3"); "off" adds one gateway
 *                      with CLUSTER=off on the same Postgres and Redis, for comparison
 *   BENCH_SESSIONS     sessions (default 30)
 *   BENCH_DURATION     seconds of measured send load (default 15)
 *   BENCH_CONNECTIONS  concurrent HTTP connections over all runners (default 20)
 *
 * Postgres 15 and Redis 7 are the test suite's (test/support/servers/): installed with apt-get
 * when missing (as root), started on loopback in temp dirs, stopped at the end.
 *
 * The modules: settings.ts (the above), backends.ts (Postgres, Redis, psql), runners.ts (runner
 * processes, cleanup), round.ts (one runner count), api.ts and load.ts (HTTP), cpu.ts (/proc),
 * report.ts (the table).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import { mainScript } from "../../test/support/gatewayEnv.js"
import { startBackends } from "./backends.js"
import { report } from "./report.js"
import { type Round, runRound } from "./round.js"
import { runBenchmark, workDir } from "./runners.js"
import { log, RUNNERS, since } from "./settings.js"

const main = async () => {
  const started = performance.now()
  log(`node ${process.version}, ${os.cpus().length} CPU(s), load average ${os.loadavg()[0]!.toFixed(2)}, temp dir ${workDir}`)
  if (!fs.existsSync(mainScript)) throw new Error(`${mainScript} is missing: run \`npm run build\` first`)
  const backends = await startBackends()
  const rounds: Array<Round> = []
  for (const [index, count] of RUNNERS.entries()) rounds.push(await runRound(count, index, backends))
  report(rounds)
  console.log(`\nload average now ${os.loadavg()[0]!.toFixed(2)}; the whole benchmark took ${since(started).toFixed(0)} s`)
}

await runBenchmark(main)
