/**
 * Webhook delivery through the durable outbox to a loopback receiver (`npm run bench:webhooks`).
 * The receiver runs in its own process (bench/webhooks-receiver.mjs); one webhook wants every
 * event; events are published as sessions publish them (`Events.publish`: into the outbox, in
 * their own transaction).
 *
 * 1. latency: BENCH_RATE events a second (default 200) for BENCH_SECONDS (default 10); from the
 *    moment each event's transaction has committed to the receiver having the signed POST in
 *    hand: p50, p90, p99, max;
 * 2. throughput: BENCH_EVENTS events (default 10,000) published as fast as they can be, in
 *    transactions of 100; deliveries per second from the first publish to the last arrival.
 *
 *   BENCH_STORE        sqlite (default) or postgres (a throwaway server, as the tests start one;
 *                      or BENCH_DATABASE_URL=postgres://…)
 *   BENCH_PER_WEBHOOK  deliveries in flight to the one receiver, fixed (by default the gateway's own:
 *                      from WEBHOOK_CONCURRENCY_PER_WEBHOOK's 4 up to WEBHOOK_CONCURRENCY_PER_WEBHOOK_MAX's 16
 *                      while the receiver answers fast)
 */
import { Duration, Effect, Schedule } from "effect"
import { fork } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { sandboxEngineLayer, SwitchboardCore } from "../src/app/App.js"
import { defaultSettings } from "../src/app/Config.js"
import { makeEvent } from "../src/domain/makeEvent.js"
import { Events } from "../src/runtime/Events.js"
import { Store } from "../src/runtime/ports/store/Store.js"
import { Webhooks } from "../src/services/Webhooks.js"

const RATE = Number(process.env["BENCH_RATE"] ?? 200)
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 10)
const EVENTS = Number(process.env["BENCH_EVENTS"] ?? 10_000)
const PER_WEBHOOK = process.env["BENCH_PER_WEBHOOK"] === undefined ? undefined : Number(process.env["BENCH_PER_WEBHOOK"])
const STORE = process.env["BENCH_STORE"] ?? "sqlite"

// ---------------------------------------------------------------------------------------------
// The receiver, in its own process

const receiver = fork(new URL("./webhooks-receiver.mjs", import.meta.url))
let received = 0
const port = await new Promise<number>((resolve) =>
  receiver.on("message", (message: { port?: number; count?: number }) => {
    if (message.port !== undefined) resolve(message.port)
    if (message.count !== undefined) received = message.count
  })
)
const arrivalsOf = () =>
  new Promise<Map<string, number>>((resolve) => {
    const listener = (message: { arrivals?: Array<[string, number]> }) => {
      if (message.arrivals === undefined) return
      receiver.off("message", listener)
      const first = new Map<string, number>()
      for (const [id, at] of message.arrivals) if (!first.has(id)) first.set(id, at)
      resolve(first)
    }
    receiver.on("message", listener)
    receiver.send("dump")
  })

// ---------------------------------------------------------------------------------------------
// The Store

const postgresUrl = async (): Promise<{ url: string; stop: () => Promise<void> }> => {
  const given = process.env["BENCH_DATABASE_URL"]
  if (given !== undefined) return { url: given, stop: async () => {} }
  const { findPostgresBinDir, startPostgres } = await import("../test/support/servers/postgres.js")
  const binDir = findPostgresBinDir()
  if (binDir === undefined) throw new Error("BENCH_STORE=postgres: no Postgres server programs here; set BENCH_DATABASE_URL")
  const server = await startPostgres(binDir)
  return { url: server.env["TEST_POSTGRES_URL"]!, stop: server.stop }
}

const dataDir = mkdtempSync(join(tmpdir(), "switchboard-webhooks-"))
const store = STORE === "postgres" ? await postgresUrl() : { url: `sqlite:${dataDir}/sb.db`, stop: async () => {} }

// ---------------------------------------------------------------------------------------------
// The runs

const waitUntil = (done: () => boolean) =>
  Effect.suspend(() => (done() ? Effect.void : Effect.fail("not yet"))).pipe(Effect.retry(Schedule.spaced("5 millis")))

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const groupUpdate = (i: number) => makeEvent("group.update", "bench-session", { groupId: "120363000000000000@g.us", update: { subject: `s${i}` }, by: null })

const program = Effect.gen(function*() {
  const events = yield* Events
  const transactionally = (yield* Store).transactionally
  yield* (yield* Webhooks).create(null, { url: `http://127.0.0.1:${port}/hook`, events: ["group.update"] })

  // Warm-up: the first deliveries open the connections and run code V8 has not compiled yet.
  for (let i = 0; i < 200; i++) yield* events.publish(groupUpdate(i))
  yield* waitUntil(() => received >= 200)
  receiver.send("reset")
  yield* waitUntil(() => received === 0)

  // 1. Latency at a steady rate: each event published on its own tick, its commit time noted.
  const committedAt = new Map<string, number>()
  const count = RATE * SECONDS
  const steadyCpuBefore = process.cpuUsage()
  const start = Date.now()
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / RATE - Date.now()
    if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
    const event = groupUpdate(i)
    yield* events.publish(event)
    committedAt.set(event.id, Date.now())
  }
  yield* waitUntil(() => received >= count)
  const steadyCpu = process.cpuUsage(steadyCpuBefore)
  const arrived = yield* Effect.promise(arrivalsOf)
  const inOrder = [...committedAt].map(([id, at]) => arrived.get(id)! - at)
  if (process.env["BENCH_DEBUG"]) console.log("latencies in publish order", inOrder.filter((_, i) => i % 100 === 0).join(" "))
  const latencies = inOrder.sort((a, b) => a - b)

  // 2. Throughput: events published back to back, delivered as fast as the dispatcher goes.
  receiver.send("reset")
  yield* waitUntil(() => received === 0)
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  // In transactions of 100 (as a gateway's group commit writes them), so that the outbox fills
  // faster than it is emptied, on Postgres too, and the figure is the dispatcher's.
  for (let i = 0; i < EVENTS; i += 100) {
    yield* transactionally(Effect.forEach(Array.from({ length: Math.min(100, EVENTS - i) }, (_, n) => groupUpdate(i + n)), events.publish, { discard: true }))
  }
  const publishedMs = performance.now() - started
  const publishCpu = process.cpuUsage(cpuBefore)
  yield* waitUntil(() => received >= EVENTS)
  const deliveredMs = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  const cpuMs = (cpu.user + cpu.system) / 1000
  yield* Effect.sleep("200 millis") // a late duplicate would arrive now
  const duplicates = received - (yield* Effect.promise(arrivalsOf)).size
  return {
    latencies,
    steadyCpuMs: (steadyCpu.user + steadyCpu.system) / 1000,
    publishedMs,
    deliveredMs,
    duplicates,
    cpuMs,
    publishCpuMs: (publishCpu.user + publishCpu.system) / 1000
  }
})

const loadBefore = loadavg()
const main = Effect.gen(function*() {
  const defaults = yield* defaultSettings()
  const settings = yield* defaultSettings({
    dataDir,
    databaseUrl: store.url,
    engine: "sandbox",
    pacing: { sendsPerMinute: 0 },
    webhooks: {
      ...defaults.webhooks,
      allowPrivate: true,
      ...(PER_WEBHOOK === undefined ? {} : { perWebhookConcurrency: PER_WEBHOOK, perWebhookConcurrencyMax: PER_WEBHOOK })
    }
  })
  return yield* Effect.scoped(Effect.provide(program, SwitchboardCore(settings, sandboxEngineLayer(settings))))
})

const { cpuMs, deliveredMs, duplicates, latencies, publishCpuMs, publishedMs, steadyCpuMs } = await Effect.runPromise(main)
const loadAfter = loadavg()
receiver.send("stop")
await store.stop()
rmSync(dataDir, { recursive: true, force: true })
const load = (avg: ReadonlyArray<number>) => avg.map((n) => n.toFixed(2)).join(" ")
console.log(`webhooks through the outbox to a loopback receiver (${STORE}, sandbox), node ${process.version}`)
console.log(`load average before ${load(loadBefore)}, after ${load(loadAfter)}`)
console.log(`latency at ${RATE} events/s for ${SECONDS} s (${latencies.length} events): event committed → webhook received`)
console.log(
  `  p50 ${percentile(latencies, 50)} ms   p90 ${percentile(latencies, 90)} ms   p99 ${percentile(latencies, 99)} ms   max ${latencies.at(-1)} ms`
)
console.log(`  gateway CPU ${(steadyCpuMs / latencies.length).toFixed(2)} ms per event published and delivered (${(steadyCpuMs / 1000 / SECONDS * 100).toFixed(0)} % of a core)`)
console.log(`throughput, ${EVENTS} events published back to back, 100 a transaction (publishing took ${publishedMs.toFixed(0)} ms), ${
  PER_WEBHOOK ?? "the adaptive number (WEBHOOK_CONCURRENCY_PER_WEBHOOK up to _MAX)"
} in flight to the receiver`)
console.log(`  all received after ${deliveredMs.toFixed(0)} ms → ${Math.round(EVENTS / (deliveredMs / 1000))} deliveries/s (${duplicates} received twice)`)
console.log(`  gateway CPU ${(cpuMs / EVENTS).toFixed(2)} ms per event published and delivered (${(publishCpuMs / EVENTS).toFixed(2)} ms of it while publishing)`)
