// Memory per linked WhatsApp session: links N sessions of the real Baileys engine against the
// loopback WhatsApp Web peer, all in this one process, and prints RSS and heap per linked
// session. Run with `npm run bench:memory` (node --expose-gc + vite-node, no build needed).
//
// Environment:
//   BENCH_SESSIONS     sessions to link (default 50)
//   BENCH_CONCURRENCY  sessions being linked at the same time (default 5)
//   BENCH_SETTLE_MS    pause after linking, before measuring (default 2000)
//   BENCH_TIMEOUT_MS   per session: from create to ready (default 60000)
//   BENCH_KEEP=1       keep the temp data dir (SQLite database with the credentials)
//   LOG_LEVEL          the gateway's log level (default Off: Baileys logs each pairing's expected
//                      515 restart as "stream errored out" at Error); All/Fatal/Error/Warn/Info/Debug/Trace/Off
//
// What the numbers include: the peer runs in this process too, so a linked session's cost is
// the gateway's session (Baileys socket, Signal keys, actor, SQLite rows) plus the peer's side of
// it (its websocket, the account, the phone's Signal identity). The baseline is taken with the
// peer and the core started and no session, after two forced GCs; so is every later measurement.
//
// Exit code: 0 when every session linked and was still ready when measured, 1 otherwise.

import { Config, ConfigProvider, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { SwitchboardCore } from "../src/app/App.js"
import { defaultSettings } from "../src/app/Config.js"
import { BaileysEngineLive } from "../src/runtime/engines/baileys/BaileysEngine.js"
import type { SessionStatus } from "../src/domain/Session.js"
import { Sessions } from "../src/services/Sessions.js"
import { startWaPeer, type WaPeer } from "../test/support/wa-peer/index.js"

// libsignal's session chatter (which carries key material) is dropped by the Baileys engine itself.

// --- settings ---------------------------------------------------------------------------------
const int = (name: string, fallback: number, min: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`)
  return n
}

const out = (line = "") => void process.stdout.write(`${line}\n`)
const root = fileURLToPath(new URL("..", import.meta.url))

interface Sample {
  readonly label: string
  readonly sessions: number
  readonly usage: NodeJS.MemoryUsage
}

/** A distinct 11-digit phone number per session. */
const phoneOf = (i: number) => `1555${String(7_000_000 + i).padStart(7, "0")}`

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
const perSession = (bytes: number) => {
  const kb = bytes / 1024
  return Math.abs(kb) >= 1024 ? `${(kb / 1024).toFixed(2)} MB` : `${kb.toFixed(0)} KB`
}
const pad = (text: string, width: number) => text.padStart(width)
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN

const main = async (): Promise<number> => {
  const gc = globalThis.gc
  if (gc === undefined) {
    out("bench:memory: global.gc is missing; run node with --expose-gc (npm run bench:memory does)")
    return 1
  }
  const N = int("BENCH_SESSIONS", 50, 1)
  const CONCURRENCY = Math.min(N, int("BENCH_CONCURRENCY", 5, 1))
  const SETTLE_MS = int("BENCH_SETTLE_MS", 2_000, 0)
  const TIMEOUT_MS = int("BENCH_TIMEOUT_MS", 60_000, 1_000)
  const KEEP = process.env["BENCH_KEEP"] === "1"
  const logLevel = await Effect.runPromise(
    Config.logLevel("LOG_LEVEL").pipe(
      Config.withDefault(LogLevel.None),
      Effect.withConfigProvider(ConfigProvider.fromEnv())
    )
  )

  const baileysVersion = (JSON.parse(
    fs.readFileSync(path.join(root, "node_modules/@whiskeysockets/baileys/package.json"), "utf8")
  ) as { version: string }).version
  out(`Switchboard · Baileys memory per linked session`)
  out(
    `node ${process.version} · ${process.platform} ${process.arch} · ${os.cpus().length} CPUs · ` +
      `${(os.totalmem() / 1024 ** 3).toFixed(1)} GB RAM · Baileys ${baileysVersion}`
  )
  out(`sessions ${N} · concurrency ${CONCURRENCY} · settle ${SETTLE_MS} ms · timeout ${TIMEOUT_MS} ms/session`)

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "switchboard-bench-memory-"))
  let peer: WaPeer | undefined
  let scope: Scope.CloseableScope | undefined
  let failure: string | undefined
  const samples: Array<Sample> = []

  const measure = async (label: string, sessions: number) => {
    gc()
    await sleep(50)
    gc()
    samples.push({ label, sessions, usage: process.memoryUsage() })
  }

  try {
    peer = await startWaPeer()
    const settings = await Effect.runPromise(defaultSettings({
      dataDir,
      databaseUrl: `sqlite:${path.join(dataDir, "sb.db")}`,
      engine: "baileys",
      logLevel
    }))
    scope = await Effect.runPromise(Scope.make())
    const core = SwitchboardCore(settings, BaileysEngineLive({ waWebSocketUrl: peer.url }))
    const context = await Effect.runPromise(
      Scope.extend(Layer.build(core), scope).pipe(Logger.withMinimumLogLevel(logLevel))
    )
    const run = <A, E>(effect: Effect.Effect<A, E, Sessions>): Promise<A> =>
      Effect.runPromise(Effect.provide(effect, context).pipe(Logger.withMinimumLogLevel(logLevel)))
    const sessions = await run(Sessions)

    await measure("baseline", 0)

    const terminal = (status: SessionStatus) => status === "failed" || status === "logged_out" || status === "stopped"
    const ids: Array<string> = []
    const latencies: Array<number> = []
    let scanRetries = 0
    let linkStart = 0

    /** create → QR → the phone scans it → ready; the time it took, in ms. */
    const link = async (i: number): Promise<number> => {
      const started = performance.now()
      const deadline = started + TIMEOUT_MS
      const left = () => Math.max(1, Math.round(deadline - performance.now()))
      const phone = phoneOf(i)
      const session = await run(sessions.create({ name: `bench-${i}`, autoStart: true }))
      ids.push(session.id)
      for (let attempt = 1;; attempt++) {
        const shown = await run(sessions.awaitStatus(session.id, (s) => s === "qr_ready" || terminal(s), left()))
        if (shown.status !== "qr_ready") {
          throw new Error(`session ${i} (${session.id}) showed no QR within ${TIMEOUT_MS} ms: it is ${shown.status}`)
        }
        const { qr } = await run(sessions.qr(session.id))
        try {
          await peer!.scan(qr, { phone })
          break
        } catch (error) {
          // The QR can rotate between reading and scanning it; take the next one.
          if (attempt >= 3) throw new Error(`session ${i} (${session.id}): the phone could not scan its QR: ${String(error)}`)
          scanRetries++
          await sleep(200)
        }
      }
      const linked = await run(sessions.awaitStatus(session.id, (s) => s === "ready" || terminal(s), left()))
      if (linked.status !== "ready") {
        const why = linked.lastError ? ` (${linked.lastError.code}: ${linked.lastError.message})` : ""
        throw new Error(`session ${i} (${session.id}) not ready within ${TIMEOUT_MS} ms of its creation: it is ${linked.status}${why}`)
      }
      if (linked.phone !== phone) throw new Error(`session ${i} linked as ${linked.phone}, expected ${phone}`)
      return performance.now() - started
    }

    /** Links sessions [from, to) with at most CONCURRENCY in flight; the wall time in ms. */
    const linkRange = async (from: number, to: number): Promise<number> => {
      const started = performance.now()
      let next = from
      const worker = async () => {
        while (next < to && failure === undefined) {
          const i = next++
          try {
            latencies.push(await link(i))
          } catch (error) {
            failure ??= error instanceof Error ? error.message : String(error)
          }
          if (latencies.length % 10 === 0 && failure === undefined) {
            out(`  linked ${pad(String(latencies.length), String(N).length)}/${N}  ${((performance.now() - linkStart) / 1000).toFixed(1)} s`)
          }
        }
      }
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, to - from) }, worker))
      return performance.now() - started
    }

    /** Every linked session still ready (no reconnect under way) when measured. */
    const checkAllReady = async () => {
      const statuses = await Promise.all(ids.map((id) => run(sessions.get(id)).then((s) => s.status)))
      const notReady = statuses.filter((status) => status !== "ready")
      if (notReady.length > 0) failure ??= `${notReady.length} of ${ids.length} sessions were no longer ready when measured: ${notReady.join(", ")}`
    }

    out(`linking…`)
    linkStart = performance.now()
    const half = N >= 4 ? Math.floor(N / 2) : 0
    let linkingMs = 0
    if (half > 0) {
      linkingMs += await linkRange(0, half)
      if (failure === undefined) {
        await sleep(SETTLE_MS)
        await checkAllReady()
        // Measuring is not linking: it stays out of the linking time.
        await measure("linked N/2", half)
      }
    }
    if (failure === undefined) linkingMs += await linkRange(half, N)
    if (failure === undefined) {
      await sleep(SETTLE_MS)
      await checkAllReady()
      await measure("linked N", N)
    }

    if (failure === undefined) {
      const [base, ...rest] = samples as [Sample, ...Array<Sample>]
      const full = rest[rest.length - 1]!
      const halfSample = rest.length > 1 ? rest[0] : undefined
      const widths = [12, 9, 9, 12, 13, 12, 13]
      const row = (cells: Array<string>) =>
        out(cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : pad(cell, widths[i]!))).join(""))
      out()
      row(["", "sessions", "rss MB", "heapUsed MB", "heapTotal MB", "external MB", "arrayBufs MB"])
      for (const { label, sessions: n, usage } of samples) {
        row([label, String(n), mb(usage.rss), mb(usage.heapUsed), mb(usage.heapTotal), mb(usage.external), mb(usage.arrayBuffers)])
      }
      const delta = (from: Sample, to: Sample, label: string) => {
        const n = to.sessions - from.sessions
        const d = (key: keyof NodeJS.MemoryUsage) => perSession((to.usage[key] - from.usage[key]) / n)
        row([label, "", d("rss"), d("heapUsed"), d("heapTotal"), d("external"), d("arrayBuffers")])
      }
      out(`per linked session:`)
      delta(base, full, `  0 → ${N}`)
      if (halfSample) {
        delta(base, halfSample, `  0 → ${half}`)
        delta(halfSample, full, `  ${half} → ${N}`)
      }
      const sorted = [...latencies].sort((a, b) => a - b)
      out()
      out(
        `linking: ${N} sessions in ${(linkingMs / 1000).toFixed(1)} s (${(linkingMs / N).toFixed(0)} ms/session wall, ` +
          `${CONCURRENCY} at a time); create→ready p50 ${percentile(sorted, 50).toFixed(0)} ms, ` +
          `p95 ${percentile(sorted, 95).toFixed(0)} ms, max ${percentile(sorted, 100).toFixed(0)} ms` +
          (scanRetries > 0 ? `; ${scanRetries} QR re-scans` : "")
      )
      out(`(rss keeps pages freed by GC and the linking burst; heapUsed is the steadier per-session figure)`)
    }
  } catch (error) {
    failure ??= error instanceof Error ? (error.stack ?? error.message) : String(error)
  } finally {
    const started = performance.now()
    const shutdown = async () => {
      if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
      if (peer) await peer.close()
    }
    const timedOut = Symbol("timeout")
    const closed = await Promise.race([
      shutdown().then(() => true, (error) => `shutdown failed: ${String(error)}`),
      sleep(30_000).then(() => timedOut)
    ])
    if (closed === timedOut) failure ??= "shutdown did not finish within 30 s"
    else if (closed !== true) failure ??= String(closed)
    else out(`shutdown: ${(performance.now() - started).toFixed(0)} ms`)
    if (KEEP) out(`kept ${dataDir}`)
    else fs.rmSync(dataDir, { recursive: true, force: true })
  }
  if (failure !== undefined) {
    out(`FAILED: ${failure}`)
    return 1
  }
  return 0
}

main().then(
  (code) => process.exit(code),
  (error) => {
    out(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    process.exit(1)
  }
)
