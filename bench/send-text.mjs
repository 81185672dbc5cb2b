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
//                      worker thread of this process, like the gateway has its own process) or
//                      "inline" (on this thread, sharing the event loop with autocannon)
//   BENCH_KEEP=1       keep the temp dir (database + gateway log); BENCH_KEEP_ON_FAILURE=1 keeps
//                      it only when the run fails (the gateway log is printed on failure anyway)
//
// The gateway is given a free port picked here (its Config rejects PORT=0) and counts as up
// when it prints "Listening on …" (only at LOG_LEVEL Info or lower) or /api/health/live answers.
//
// Exit code: 0 when everything passed, 1 on any failure (gateway did not start, non-2xx or
// errors under load, stored count differs from accepted count, gateway did not exit cleanly).

import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "..")
const mainJs = path.join(root, "dist", "main.js")

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
const KEEP = process.env.BENCH_KEEP === "1"
const API_KEY = `bench_${randomUUID()}`
const CHAT_ID = "447700900123@c.us" // owned by no sandbox session, not an echo contact (1555000…)
const BODY = JSON.stringify({ chatId: CHAT_ID, text: "Benchmark message: hello from autocannon" })

if (BARE_MODE !== "worker" && BARE_MODE !== "inline") {
  console.error(`BENCH_BARE must be "worker" or "inline", got ${JSON.stringify(BARE_MODE)}`)
  process.exit(1)
}

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-"))
const logFile = path.join(tmpDir, "gateway.log")
const logStream = fs.createWriteStream(logFile)

const failures = []
let child
let childExit // Promise<{code, signal}>
let bareStop = async () => {}

class BenchError extends Error {}
const fail = (message) => {
  throw new BenchError(message)
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const withTimeout = (promise, ms, what) => {
  let timer
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new BenchError(`timed out after ${ms} ms: ${what}`)), ms)
    })
  ])
}

const log = (line) => console.log(`[bench] ${line}`)

// ---------------------------------------------------------------------------------------------
// Gateway process

/** A port that was free a moment ago (the gateway binds it right after). */
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

const readRssKb = (pid) => {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

/** CPU seconds (user + system) the process has used so far, from /proc/<pid>/stat (Linux, USER_HZ = 100). */
const readCpuSeconds = (pid) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

const mb = (kb) => (kb === undefined ? "n/a" : `${(kb / 1024).toFixed(1)} MB`)

/**
 * Starts dist/main.js and resolves with its base URL once it accepts requests. The gateway
 * prints `Listening on http://…` only at log level Info or lower, so readiness is whichever
 * comes first: that line, or GET /api/health/live answering 200 on the port we gave it.
 */
const startGateway = async () => {
  if (!fs.existsSync(mainJs)) fail(`${mainJs} does not exist; run \`npm run build\` first`)
  const port = await freePort()
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: path.join(tmpDir, "data"),
    API_KEY,
    ENGINE: "sandbox",
    SANDBOX_PAIR_DELAY_MS: "50",
    LOG_LEVEL,
    LOG_FORMAT: "pretty"
  }
  delete env.DATABASE_URL
  child = spawn(process.execPath, [mainJs], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
  childExit = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })))
  child.on("error", (error) => logStream.write(`[bench] spawn error: ${error.stack ?? error}\n`))

  let listeningUrl
  let stdoutBuffer = ""
  child.stdout.on("data", (chunk) => {
    logStream.write(chunk)
    stdoutBuffer += chunk.toString("utf8")
    const match = /Listening on (http:\/\/[^\s"']+)/.exec(stdoutBuffer)
    if (match) listeningUrl = match[1].replace(/\/+$/, "")
    if (stdoutBuffer.length > 65536) stdoutBuffer = stdoutBuffer.slice(-4096)
  })
  child.stderr.on("data", (chunk) => logStream.write(chunk))

  const fallbackUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  let exited
  childExit.then((e) => (exited = e))
  while (Date.now() < deadline) {
    if (exited) fail(`gateway exited during start-up (code ${exited.code}, signal ${exited.signal})`)
    if (listeningUrl) return listeningUrl
    try {
      const res = await request("GET", `${fallbackUrl}/api/health/live`, undefined, { timeoutMs: 1000, auth: false })
      if (res.status === 200) return fallbackUrl
    } catch {
      // not up yet
    }
    await sleep(50)
  }
  fail("gateway did not start listening within 20 s")
}

const stopGateway = async () => {
  if (!child || child.exitCode !== null || child.signalCode !== null) return childExit ? await childExit : undefined
  child.kill("SIGTERM")
  try {
    return await withTimeout(childExit, 15_000, "gateway exit after SIGTERM")
  } catch (error) {
    child.kill("SIGKILL")
    await childExit
    throw error
  }
}

// ---------------------------------------------------------------------------------------------
// Small HTTP client for set-up and checks

const request = (method, url, body, { timeoutMs = 5000, auth = true } = {}) =>
  new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers = { accept: "application/json" }
    if (auth) headers["x-api-key"] = API_KEY
    if (payload !== undefined) {
      headers["content-type"] = "application/json"
      headers["content-length"] = Buffer.byteLength(payload)
    }
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks = []
      res.on("data", (c) => chunks.push(c))
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let json
        try {
          json = text.length > 0 ? JSON.parse(text) : undefined
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode, json, text })
      })
      res.on("error", reject)
    })
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url} timed out after ${timeoutMs} ms`)))
    req.on("error", reject)
    if (payload !== undefined) req.write(payload)
    req.end()
  })

const expectStatus = (res, expected, what) => {
  if (res.status !== expected) fail(`${what}: expected HTTP ${expected}, got ${res.status}: ${res.text.slice(0, 500)}`)
  return res.json
}

const setUpSession = async (base) => {
  const created = expectStatus(await request("POST", `${base}/api/sessions`, { name: "bench" }), 201, "POST /api/sessions")
  const id = created?.id
  if (typeof id !== "string") fail(`POST /api/sessions returned no id: ${JSON.stringify(created)}`)
  const started = await request("POST", `${base}/api/sessions/${id}/start`)
  if (started.status < 200 || started.status >= 300) {
    fail(`POST /api/sessions/${id}/start: HTTP ${started.status}: ${started.text.slice(0, 500)}`)
  }
  const deadline = Date.now() + 15_000
  let last
  while (Date.now() < deadline) {
    last = expectStatus(await request("GET", `${base}/api/sessions/${id}`), 200, `GET /api/sessions/${id}`)
    if (last?.status === "ready") return id
    if (last?.status === "failed" || last?.status === "logged_out") break
    await sleep(50)
  }
  fail(`session ${id} did not become ready within 15 s (last status: ${JSON.stringify(last?.status)})`)
}

const countMessages = async (base, sessionId, query = "") => {
  const res = await request("GET", `${base}/api/sessions/${sessionId}/messages?limit=1${query}`, undefined, { timeoutMs: 30_000 })
  const body = expectStatus(res, 200, `GET /api/sessions/${sessionId}/messages`)
  const total = body?.data?.pagination?.total
  if (typeof total !== "number") fail(`messages list has no data.pagination.total: ${res.text.slice(0, 300)}`)
  return total
}

// ---------------------------------------------------------------------------------------------
// Bare node:http server: the floor a JSON POST costs on this machine

const bareServerSource = `
const http = require("node:http")
const { randomUUID } = require("node:crypto")
const send = (res, status, body) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}
const server = http.createServer((req, res) => {
  if (req.method !== "POST") return send(res, 405, { error: "method not allowed" })
  const chunks = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    let body
    try { body = JSON.parse(Buffer.concat(chunks).toString("utf8")) } catch { return send(res, 400, { error: "invalid JSON" }) }
    if (body === null || typeof body !== "object" || typeof body.chatId !== "string" || typeof body.text !== "string") {
      return send(res, 400, { error: "chatId and text must be strings" })
    }
    send(res, 201, { messageId: randomUUID(), chatId: body.chatId, status: "pending", timestamp: new Date().toISOString() })
  })
})
`

const startBare = async () => {
  if (BARE_MODE === "inline") {
    const server = new Function("require", `${bareServerSource}; return server`)(
      (await import("node:module")).createRequire(import.meta.url)
    )
    await new Promise((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", resolve)
    })
    bareStop = () => new Promise((resolve) => {
      server.closeAllConnections?.()
      server.close(() => resolve())
    })
    return `http://127.0.0.1:${server.address().port}`
  }
  const worker = new Worker(
    `${bareServerSource}
const { parentPort } = require("node:worker_threads")
server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port))
parentPort.on("message", () => { server.closeAllConnections(); server.close(() => process.exit(0)) })`,
    { eval: true }
  )
  const port = await withTimeout(
    new Promise((resolve, reject) => {
      worker.once("message", resolve)
      worker.once("error", reject)
      worker.once("exit", (code) => reject(new Error(`bare server worker exited (code ${code})`)))
    }),
    10_000,
    "bare server start"
  )
  bareStop = async () => {
    const exited = new Promise((resolve) => worker.once("exit", resolve))
    worker.postMessage("stop")
    await withTimeout(exited, 5000, "bare server stop").catch(() => worker.terminate())
  }
  return `http://127.0.0.1:${port}`
}

// ---------------------------------------------------------------------------------------------
// Load

const load = (url, seconds) =>
  autocannon({
    url,
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": API_KEY },
    body: BODY,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 10
  })

const summarize = (result) => ({
  rps: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  total: result.requests.total,
  ok: result["2xx"],
  // Requests written but never answered because autocannon closed the sockets at the end of
  // the run (at most one per connection): the server may or may not have handled them.
  abandoned: Math.max(0, result.requests.sent - result["1xx"] - result["2xx"] - result["3xx"] - result["4xx"] - result["5xx"]),
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes: result.statusCodeStats
})

const checkLoad = (name, s) => {
  if (s.non2xx > 0) failures.push(`${name}: ${s.non2xx} non-2xx responses (status codes: ${JSON.stringify(s.statusCodes)})`)
  if (s.errors > 0) failures.push(`${name}: ${s.errors} connection errors (${s.timeouts} timeouts)`)
  if (s.ok === 0) failures.push(`${name}: no successful requests at all`)
}

// ---------------------------------------------------------------------------------------------
// Report

const fmt = (n, digits = 0) => (n === undefined || Number.isNaN(n) ? "n/a" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }))
const ratio = (a, b) => (b > 0 ? `${Number((a / b).toPrecision(3))}×` : "n/a")

const table = (rows) => {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)))
  return rows
    .map((r) => r.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join("   "))
    .join("\n")
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const loadAtStart = os.loadavg()[0]
  log(`node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? "unknown"}), temp dir ${tmpDir}`)
  log(`load: ${CONNECTIONS} connections, ${DURATION} s measured per target, ${WARMUP} s gateway warm-up; body ${Buffer.byteLength(BODY)} bytes`)

  const base = await startGateway()
  log(`gateway pid ${child.pid} up at ${base} (LOG_LEVEL=${LOG_LEVEL}, ENGINE=sandbox, SQLite in ${path.join(tmpDir, "data")})`)
  const sessionId = await setUpSession(base)
  log(`session ${sessionId} is ready`)
  const sendUrl = `${base}/api/sessions/${sessionId}/messages/send-text`

  // Sanity: one request by hand, so a wrong route or key fails with its body rather than a count.
  const probe = await request("POST", sendUrl, JSON.parse(BODY))
  const probeBody = expectStatus(probe, 201, "POST send-text (probe)")
  if (probeBody?.status !== "pending" || typeof probeBody?.messageId !== "string") {
    fail(`send-text answered an unexpected body: ${probe.text.slice(0, 300)}`)
  }
  let accepted = 1
  let abandoned = 0

  const rssStart = readRssKb(child.pid)

  log(`warm-up: ${WARMUP} s against the gateway…`)
  const warm = summarize(await load(sendUrl, WARMUP))
  checkLoad("gateway warm-up", warm)
  accepted += warm.ok
  abandoned += warm.abandoned

  log(`measuring gateway: ${DURATION} s…`)
  const cpuBefore = readCpuSeconds(child.pid)
  const gw = summarize(await load(sendUrl, DURATION))
  const cpuAfter = readCpuSeconds(child.pid)
  const cpuPerRequestMs = cpuBefore === undefined || cpuAfter === undefined || gw.total === 0
    ? undefined
    : ((cpuAfter - cpuBefore) * 1000) / gw.total
  checkLoad("gateway", gw)
  accepted += gw.ok
  abandoned += gw.abandoned
  const rssAfterLoad = readRssKb(child.pid)

  // Every 201 means "stored"; the outbound lane sends them afterwards, in the background.
  // Requests cut off in flight when a run ended may have been stored too (the client just
  // never saw the 201), so: accepted <= stored <= accepted + abandoned. Give their handlers a
  // moment to finish first.
  await sleep(500)
  const stored = await countMessages(base, sessionId)
  const pending = await countMessages(base, sessionId, "&status=pending")
  const storedOk = stored >= accepted && stored <= accepted + abandoned
  if (!storedOk) {
    failures.push(stored < accepted
      ? `stored messages (${stored}) < accepted 2xx (${accepted}): ${accepted - stored} acknowledged message(s) were lost`
      : `stored messages (${stored}) > accepted 2xx (${accepted}) + requests cut off in flight (${abandoned})`)
  }

  log(`measuring bare node:http (${BARE_MODE === "worker" ? "worker thread" : "same thread as autocannon"}): ${DURATION} s…`)
  const bareUrl = await startBare()
  // A short warm-up too, so both targets are measured with a warm JIT.
  await load(bareUrl, Math.min(WARMUP, 2))
  const bare = summarize(await load(bareUrl, DURATION))
  checkLoad("bare node:http", bare)
  await bareStop()

  const rows = [
    ["", "gateway", "bare node:http", "gateway/bare"],
    ["requests/s (average)", fmt(gw.rps), fmt(bare.rps), ratio(gw.rps, bare.rps)],
    ["latency p50 (ms)", fmt(gw.p50, 1), fmt(bare.p50, 1), ratio(gw.p50, bare.p50)],
    ["latency p99 (ms)", fmt(gw.p99, 1), fmt(bare.p99, 1), ratio(gw.p99, bare.p99)],
    ["requests completed", fmt(gw.total), fmt(bare.total), ""],
    ["2xx", fmt(gw.ok), fmt(bare.ok), ""],
    ["non-2xx", fmt(gw.non2xx), fmt(bare.non2xx), ""],
    ["socket errors/timeouts", `${gw.errors}/${gw.timeouts}`, `${bare.errors}/${bare.timeouts}`, ""],
    ["cut off in flight at end", fmt(gw.abandoned), fmt(bare.abandoned), ""]
  ]
  console.log("")
  console.log(`POST send-text, ${CONNECTIONS} connections, ${DURATION} s each, same machine, same run`)
  console.log("")
  console.log(table(rows))
  console.log("")
  console.log(`gateway throughput is ${gw.rps > 0 && bare.rps > 0 ? `${((gw.rps / bare.rps) * 100).toFixed(1)}% of` : "n/a vs"} a bare node:http server doing JSON parse + reply`)
  console.log(`machine load average (1 min): ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} CPU(s), ${loadAtStart.toFixed(2)} at start` +
    " (other processes on the machine skew both figures; compare ratios from quiet runs)")
  if (cpuPerRequestMs !== undefined) {
    console.log(`gateway CPU: ${(cpuAfter - cpuBefore).toFixed(1)} s over the ${DURATION} s run = ${cpuPerRequestMs.toFixed(2)} ms of CPU per send-text` +
      ` (a bare JSON POST costs ~${(1000 / bare.rps).toFixed(2)} ms of wall time per request at its throughput)`)
  }
  console.log(`gateway RSS: ${mb(rssStart)} before load, ${mb(rssAfterLoad)} after ${WARMUP + DURATION} s of load`)
  const extra = stored - accepted
  console.log(`messages: ${fmt(accepted)} accepted (201s seen, incl. warm-up and 1 probe), ${fmt(stored)} stored` +
    (extra === 0 ? "" : ` (${extra > 0 ? "+" : ""}${extra} vs accepted; ${abandoned} request(s) were cut off in flight when autocannon stopped)`) +
    ` ${storedOk ? "✓" : "✗ MISMATCH"}`)
  console.log(`outbound lane: ${fmt(pending)} of the stored messages still pending (not yet sent) when counted`)

  const exit = await stopGateway()
  if (exit && !(exit.code === 0 || exit.signal === "SIGTERM" || exit.code === 130 || exit.code === 143)) {
    failures.push(`gateway exited with code ${exit.code}, signal ${exit.signal} after SIGTERM`)
  }
  log(`gateway stopped (code ${exit?.code}, signal ${exit?.signal})`)
}

const cleanUp = async () => {
  await bareStop().catch(() => {})
  await stopGateway().catch((error) => failures.push(String(error.message ?? error)))
  await new Promise((resolve) => logStream.end(resolve))
}

const printGatewayLog = () => {
  try {
    const text = fs.readFileSync(logFile, "utf8")
    const tail = text.length > 20_000 ? `…(truncated)…\n${text.slice(-20_000)}` : text
    console.error(`\n----- gateway log (${logFile}) -----\n${tail || "(empty)"}\n----- end of gateway log -----`)
  } catch (error) {
    console.error(`(could not read gateway log: ${error.message})`)
  }
}

let crashed
try {
  await main()
} catch (error) {
  crashed = error
}
await cleanUp()

if (crashed) failures.unshift(crashed instanceof BenchError ? crashed.message : String(crashed.stack ?? crashed))
if (failures.length > 0) {
  console.error(`\nBENCH FAILED:\n${failures.map((f) => `  - ${f}`).join("\n")}`)
  printGatewayLog()
}
if (KEEP || failures.length > 0 && process.env.BENCH_KEEP_ON_FAILURE === "1") {
  console.log(`[bench] kept ${tmpDir}`)
} else {
  fs.rmSync(tmpDir, { recursive: true, force: true })
}
process.exit(failures.length > 0 ? 1 : 0)
