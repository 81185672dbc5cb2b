#!/usr/bin/env node
// Send-text throughput of the gateway, compared in the same run with a bare node:http server
// answering the same JSON POST. Run with `npm run bench` (builds first).
//
// Environment:
//   BENCH_DURATION     seconds of measured load per target (default 10)
//   BENCH_WARMUP       seconds of warm-up load against the gateway (default 2)
//   BENCH_CONNECTIONS  concurrent connections (default 20)
//   BENCH_LOG_LEVEL    LOG_LEVEL for the gateway (default Warn; Effect accepts
//                      All/Fatal/Error/Warn/Info/Debug/Trace/None, not "Warning")
//   BENCH_BARE         where the bare server runs: "worker" (default; its own event loop on a
//                      worker thread) or "inline" (sharing this thread with autocannon)
//   BENCH_KEEP=1       keep the temp dir (database + gateway log); BENCH_KEEP_ON_FAILURE=1 keeps
//                      it only when the run fails (the gateway log is printed on failure anyway)
//
// Exit code: 0 when everything passed, 1 on any failure (gateway did not start, non-2xx or
// errors under load, stored count differs from accepted count, gateway did not exit cleanly).

import autocannon from "autocannon"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { startBare } from "./bare-server.mjs"
import { startGateway } from "./gateway.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))

const num = (name, fallback) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`)
  return n
}

const DURATION = num("BENCH_DURATION", 10)
const WARMUP = num("BENCH_WARMUP", 2)
const CONNECTIONS = Math.round(num("BENCH_CONNECTIONS", 20))
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || "Warn"
const BARE_MODE = process.env.BENCH_BARE || "worker"
if (BARE_MODE !== "worker" && BARE_MODE !== "inline") {
  throw new Error(`BENCH_BARE must be "worker" or "inline", got ${JSON.stringify(BARE_MODE)}`)
}
const API_KEY = `bench_${randomUUID()}`
const CHAT_ID = "447700900123@c.us" // owned by no sandbox session, not an echo contact (1555000…)
const MESSAGE = { chatId: CHAT_ID, text: "Benchmark message: hello from autocannon" }
const BODY = JSON.stringify(MESSAGE)

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-"))
const dataDir = path.join(tmpDir, "data")
const failures = []
let gateway // { url, pid, stop, output, cpuSeconds, rssKb } once it listens
let bare // { url, stop } while the bare server runs

class BenchError extends Error {}
const fail = (message) => {
  throw new BenchError(message)
}
const log = (line) => console.log(`[bench] ${line}`)

// ---------------------------------------------------------------------------------------------
// REST calls for set-up and checks

const api = async (method, route, body, timeoutMs = 5000) => {
  const res = await fetch(`${gateway.url}${route}`, {
    method,
    headers: { accept: "application/json", "content-type": "application/json", "x-api-key": API_KEY },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs)
  })
  const text = await res.text()
  let json
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, json, text }
}

const expectStatus = (res, expected, what) => {
  const ok = expected === "2xx" ? res.status >= 200 && res.status < 300 : res.status === expected
  if (!ok) fail(`${what}: expected HTTP ${expected}, got ${res.status}: ${res.text.slice(0, 500)}`)
  return res.json
}

const setUpSession = async () => {
  const id = expectStatus(await api("POST", "/api/sessions", { name: "bench" }), 201, "POST /api/sessions")?.id
  if (typeof id !== "string") fail("POST /api/sessions returned no id")
  expectStatus(await api("POST", `/api/sessions/${id}/start`), "2xx", `POST /api/sessions/${id}/start`)
  const deadline = Date.now() + 15_000
  let status
  while (Date.now() < deadline && status !== "failed" && status !== "logged_out") {
    status = expectStatus(await api("GET", `/api/sessions/${id}`), 200, `GET /api/sessions/${id}`)?.status
    if (status === "ready") return id
    await sleep(50)
  }
  fail(`session ${id} did not become ready within 15 s (last status: ${JSON.stringify(status)})`)
}

const countMessages = async (sessionId, query = "") => {
  const res = await api("GET", `/api/sessions/${sessionId}/messages?limit=1${query}`, undefined, 30_000)
  const total = expectStatus(res, 200, `GET /api/sessions/${sessionId}/messages`)?.data?.pagination?.total
  if (typeof total !== "number") fail(`messages list has no data.pagination.total: ${res.text.slice(0, 300)}`)
  return total
}

// ---------------------------------------------------------------------------------------------
// Load

const load = async (name, url, seconds) => {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": API_KEY },
    body: BODY,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10
  })
  const answered = result["1xx"] + result["2xx"] + result["3xx"] + result["4xx"] + result["5xx"]
  const s = {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    ok: result["2xx"],
    // Written but never answered because autocannon closed the sockets at the end of the run
    // (at most one per connection): the server may or may not have handled them.
    cutOff: Math.max(0, result.requests.sent - answered),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts
  }
  if (s.non2xx > 0) failures.push(`${name}: ${s.non2xx} non-2xx responses (status codes: ${JSON.stringify(result.statusCodeStats)})`)
  if (s.errors > 0) failures.push(`${name}: ${s.errors} connection errors (${s.timeouts} timeouts)`)
  if (s.ok === 0) failures.push(`${name}: no successful requests at all`)
  return s
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n, digits = 0) =>
  n === undefined || Number.isNaN(n) ? "n/a" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
const ratio = (a, b) => (b > 0 ? `${Number((a / b).toPrecision(3))}×` : "n/a")
const mb = (kb) => (kb === undefined ? "n/a" : `${(kb / 1024).toFixed(1)} MB`)

const table = (rows) => {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)))
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("   ")).join("\n")
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const loadAtStart = os.loadavg()[0]
  log(`node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? "unknown"}), temp dir ${tmpDir}`)
  log(`load: ${CONNECTIONS} connections, ${DURATION} s measured per target, ${WARMUP} s gateway warm-up; body ${Buffer.byteLength(BODY)} bytes`)

  const env = { ...process.env, HOST: "127.0.0.1", DATA_DIR: dataDir, API_KEY, ENGINE: "sandbox", SANDBOX_PAIR_DELAY_MS: "50", SEND_RATE_PER_MINUTE: "0", RATE_LIMIT_PER_MINUTE: "0", LOG_LEVEL, LOG_FORMAT: "pretty" }
  delete env.DATABASE_URL
  gateway = await startGateway({ mainJs: path.join(root, "dist", "main.js"), cwd: root, env, logFile: path.join(tmpDir, "gateway.log") })
    .catch((error) => fail(error.message))
  log(`gateway pid ${gateway.pid} up at ${gateway.url} (LOG_LEVEL=${LOG_LEVEL}, ENGINE=sandbox, SQLite in ${dataDir})`)
  const sessionId = await setUpSession()
  log(`session ${sessionId} is ready`)
  const sendRoute = `/api/sessions/${sessionId}/messages/send-text`

  // One request by hand first, so a wrong route or key fails with its body rather than a count.
  const probe = await api("POST", sendRoute, MESSAGE)
  const probeBody = expectStatus(probe, 201, "POST send-text (probe)")
  if (probeBody?.status !== "pending" || typeof probeBody?.messageId !== "string") {
    fail(`send-text answered an unexpected body: ${probe.text.slice(0, 300)}`)
  }

  const rssStart = gateway.rssKb()
  log(`warm-up: ${WARMUP} s against the gateway…`)
  const warm = await load("gateway warm-up", gateway.url + sendRoute, WARMUP)
  log(`measuring gateway: ${DURATION} s…`)
  const cpuBefore = gateway.cpuSeconds()
  const gw = await load("gateway", gateway.url + sendRoute, DURATION)
  const cpuSpent = gateway.cpuSeconds() - cpuBefore // NaN where /proc is missing
  const rssAfterLoad = gateway.rssKb()

  // Every 201 means "stored"; the outbound lane sends them afterwards, in the background.
  // Requests cut off in flight when a run ended may have been stored too (the client just never
  // saw the 201), so: accepted <= stored <= accepted + cut off. Let their handlers finish first.
  const accepted = 1 + warm.ok + gw.ok
  const cutOff = warm.cutOff + gw.cutOff
  await sleep(500)
  const stored = await countMessages(sessionId)
  const pending = await countMessages(sessionId, "&status=pending")
  const storedOk = stored >= accepted && stored <= accepted + cutOff
  if (stored < accepted) failures.push(`stored messages (${stored}) < accepted 2xx (${accepted}): ${accepted - stored} acknowledged message(s) were lost`)
  if (stored > accepted + cutOff) failures.push(`stored messages (${stored}) > accepted 2xx (${accepted}) + requests cut off in flight (${cutOff})`)

  log(`measuring bare node:http (${BARE_MODE === "worker" ? "worker thread" : "same thread as autocannon"}): ${DURATION} s…`)
  bare = await startBare(BARE_MODE)
  await load("bare node:http warm-up", bare.url, Math.min(WARMUP, 2)) // both targets measured with a warm JIT
  const b = await load("bare node:http", bare.url, DURATION)
  await bare.stop()
  bare = undefined

  console.log(`\nPOST send-text, ${CONNECTIONS} connections, ${DURATION} s each, same machine, same run\n`)
  console.log(table([
    ["", "gateway", "bare node:http", "gateway/bare"],
    ["requests/s (average)", fmt(gw.rps), fmt(b.rps), ratio(gw.rps, b.rps)],
    ["latency p50 (ms)", fmt(gw.p50, 1), fmt(b.p50, 1), ratio(gw.p50, b.p50)],
    ["latency p99 (ms)", fmt(gw.p99, 1), fmt(b.p99, 1), ratio(gw.p99, b.p99)],
    ["requests completed", fmt(gw.total), fmt(b.total), ""],
    ["2xx", fmt(gw.ok), fmt(b.ok), ""],
    ["non-2xx", fmt(gw.non2xx), fmt(b.non2xx), ""],
    ["socket errors/timeouts", `${gw.errors}/${gw.timeouts}`, `${b.errors}/${b.timeouts}`, ""],
    ["cut off in flight at end", fmt(gw.cutOff), fmt(b.cutOff), ""]
  ]))
  console.log("")
  const share = gw.rps > 0 && b.rps > 0 ? `${((gw.rps / b.rps) * 100).toFixed(1)}% of` : "n/a vs"
  console.log(`gateway throughput is ${share} a bare node:http server doing JSON parse + reply`)
  console.log(`machine load average (1 min): ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} CPU(s), ${loadAtStart.toFixed(2)} at start` +
    " (other processes on the machine skew both figures; compare ratios from quiet runs)")
  if (Number.isFinite(cpuSpent) && gw.total > 0) {
    console.log(`gateway CPU: ${cpuSpent.toFixed(1)} s over the ${DURATION} s run = ${((cpuSpent * 1000) / gw.total).toFixed(2)} ms of CPU per send-text` +
      ` (a bare JSON POST costs ~${(1000 / b.rps).toFixed(2)} ms of wall time per request at its throughput)`)
  }
  console.log(`gateway RSS: ${mb(rssStart)} before load, ${mb(rssAfterLoad)} after ${WARMUP + DURATION} s of load`)
  const extra = stored - accepted
  console.log(`messages: ${fmt(accepted)} accepted (201s seen, incl. warm-up and 1 probe), ${fmt(stored)} stored` +
    (extra === 0 ? "" : ` (${extra > 0 ? "+" : ""}${extra} vs accepted; ${cutOff} request(s) were cut off in flight when autocannon stopped)`) +
    ` ${storedOk ? "✓" : "✗ MISMATCH"}`)
  console.log(`outbound lane: ${fmt(pending)} of the stored messages still pending (not yet sent) when counted`)
}

try {
  await main()
} catch (error) {
  failures.unshift(error instanceof BenchError ? error.message : String(error.stack ?? error))
}
await bare?.stop()
if (gateway) {
  const exit = await gateway.stop()
  log(`gateway stopped (code ${exit.code}, signal ${exit.signal})`)
  if (!(exit.code === 0 || exit.signal === "SIGTERM" || exit.code === 143)) {
    failures.push(`gateway did not exit cleanly after SIGTERM (code ${exit.code}, signal ${exit.signal})`)
  }
}

if (failures.length > 0) {
  console.error(`\nBENCH FAILED:\n${failures.map((f) => `  - ${f}`).join("\n")}`)
  if (gateway) console.error(`\n----- gateway output (last 20,000 characters) -----\n${gateway.output() || "(empty)"}\n----- end of gateway output -----`)
}
if (process.env.BENCH_KEEP === "1" || (failures.length > 0 && process.env.BENCH_KEEP_ON_FAILURE === "1")) {
  log(`kept ${tmpDir}`)
} else {
  fs.rmSync(tmpDir, { recursive: true, force: true })
}
process.exit(failures.length > 0 ? 1 : 0)
