/**
 * Webhook delivery through the durable outbox to a loopback receiver (`npm run bench:webhooks`):
 *
 * 1. latency: one sandbox session writes to another, one message at a time; from the moment the
 *    recipient's `message.received` event is stored (its timestamp) to the receiver having the
 *    signed POST in hand — p50, p99;
 * 2. throughput: BENCH_EVENTS events published at once; deliveries per second until the
 *    receiver has them all.
 *
 *   BENCH_MESSAGES  messages for the latency run (default 300)
 *   BENCH_EVENTS    events for the throughput run (default 3000)
 *   BENCH_PER_WEBHOOK  deliveries in flight to the one receiver (default 4, as WEBHOOK_CONCURRENCY_PER_WEBHOOK)
 */
import { Duration, Effect, Schedule } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sandboxEngineLayer, SwitchboardCore } from "../src/app/App.js"
import { defaultSettings } from "../src/app/Config.js"
import { Events } from "../src/runtime/Events.js"
import { makeEvent } from "../src/domain/makeEvent.js"
import { Messaging } from "../src/services/Messaging.js"
import { Sessions } from "../src/services/Sessions.js"
import { Webhooks } from "../src/services/Webhooks.js"

const MESSAGES = Number(process.env["BENCH_MESSAGES"] ?? 300)
const EVENTS = Number(process.env["BENCH_EVENTS"] ?? 3000)
const PER_WEBHOOK = Number(process.env["BENCH_PER_WEBHOOK"] ?? 4)

/** Arrival time of every POST, by the event's id, with the event's own timestamp. */
const arrivals = new Map<string, { readonly at: number; readonly eventAt: number; readonly kind: string }>()
const receiver = http.createServer((request, response) => {
  let body = ""
  request.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => {
    const at = Date.now()
    const event = JSON.parse(body) as { id: string; event: string; timestamp: string }
    arrivals.set(event.id, { at, eventAt: Date.parse(event.timestamp), kind: event.event })
    response.writeHead(204).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const waitUntil = (done: () => boolean) =>
  Effect.suspend(() => (done() ? Effect.void : Effect.fail("not yet"))).pipe(Effect.retry(Schedule.spaced("2 millis")))

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const program = Effect.gen(function*() {
  const sessions = yield* Sessions
  const messaging = yield* Messaging
  const events = yield* Events
  yield* (yield* Webhooks).create(null, { url, events: ["message.received", "group.update"] })
  const link = (name: string) =>
    Effect.flatMap(sessions.create({ name, autoStart: true }), (s) => sessions.awaitStatus(s.id, (status) => status === "ready", "30 seconds"))
  const sender = yield* link("bench-sender")
  const recipient = yield* link("bench-recipient")

  // 1. Latency, one message at a time so that each is measured alone.
  for (let i = 0; i < MESSAGES; i++) {
    const before = arrivals.size
    yield* messaging.sendText(sender.id, { chatId: `${recipient.phone}@c.us` as never, text: `latency ${i}` })
    yield* waitUntil(() => arrivals.size > before)
  }
  const latencies = [...arrivals.values()].filter((a) => a.kind === "message.received").map((a) => a.at - a.eventAt).sort((a, b) => a - b)

  // 2. Throughput: a burst of events in the outbox, delivered as fast as the dispatcher goes.
  arrivals.clear()
  const started = performance.now()
  for (let i = 0; i < EVENTS; i++) {
    yield* events.publish(makeEvent("group.update", recipient.id, { groupId: "120363000000000000@g.us", update: { subject: `s${i}` }, by: null }))
  }
  const publishedMs = performance.now() - started
  yield* waitUntil(() => arrivals.size >= EVENTS)
  const deliveredMs = performance.now() - started
  return { latencies, publishedMs, deliveredMs }
})

const dataDir = mkdtempSync(join(tmpdir(), "switchboard-webhooks-"))
const main = Effect.gen(function*() {
  const defaults = yield* defaultSettings()
  const settings = yield* defaultSettings({
    dataDir,
    databaseUrl: `sqlite:${dataDir}/sb.db`,
    engine: "sandbox",
    sandboxPairDelay: Duration.millis(10),
    pacing: { sendsPerMinute: 0 },
    webhooks: { ...defaults.webhooks, allowPrivate: true, perWebhookConcurrency: PER_WEBHOOK }
  })
  return yield* Effect.scoped(Effect.provide(program, SwitchboardCore(settings, sandboxEngineLayer(settings))))
})

const { deliveredMs, latencies, publishedMs } = await Effect.runPromise(main)
receiver.close()
rmSync(dataDir, { recursive: true, force: true })
console.log(`webhooks through the outbox to a loopback receiver (SQLite, sandbox), node ${process.version}`)
console.log(`latency, ${latencies.length} messages one at a time: event stored → webhook received`)
console.log(`  p50 ${percentile(latencies, 50)} ms   p99 ${percentile(latencies, 99)} ms   max ${latencies.at(-1)} ms`)
console.log(`throughput, ${EVENTS} events published at once (publishing took ${publishedMs.toFixed(0)} ms), ${PER_WEBHOOK} in flight to the receiver`)
console.log(`  all received after ${deliveredMs.toFixed(0)} ms → ${Math.round(EVENTS / (deliveredMs / 1000))} deliveries/s`)
