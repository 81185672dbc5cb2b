/**
 * Bulk throughput through the session actor to the sandbox, pacing off: how many messages a
 * second one session gets from "accepted" to "delivered" (stored, queued, sent, acknowledged,
 * received by the other session and stored there). `npm run bench:bulk`.
 *
 *   BENCH_MESSAGES  messages in all (default 2000), sent as batches of 100
 */
import { Duration, Effect, Option, Schedule } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sandboxEngineLayer, SwitchboardCore } from "../src/app/App.js"
import { defaultSettings } from "../src/app/Config.js"
import { Messaging } from "../src/services/Messaging.js"
import { Sessions } from "../src/services/Sessions.js"

const TOTAL = Number(process.env["BENCH_MESSAGES"] ?? 2000)
const BATCH = 100

const program = Effect.gen(function*() {
  const sessions = yield* Sessions
  const messaging = yield* Messaging
  const link = (name: string) =>
    Effect.flatMap(sessions.create({ name, autoStart: true }), (s) => sessions.awaitStatus(s.id, (status) => status === "ready", "30 seconds"))
  const sender = yield* link("bulk-sender")
  const recipient = yield* link("bulk-recipient")
  const chatId = `${recipient.phone}@c.us` as never

  const started = performance.now()
  const batchIds: Array<string> = []
  for (let sent = 0; sent < TOTAL; sent += BATCH) {
    const count = Math.min(BATCH, TOTAL - sent)
    const messages = Array.from({ length: count }, (_, i) => ({ type: "text" as const, chatId, text: `m${sent + i}` }))
    batchIds.push((yield* messaging.sendBulk(sender.id, { messages })).batchId)
  }
  const acceptedMs = performance.now() - started
  for (const batchId of batchIds) {
    yield* messaging.getBatch(sender.id, batchId).pipe(
      Effect.filterOrFail((batch) => batch.items.every((item) => item.status === "delivered")),
      Effect.retry(Schedule.spaced("50 millis")),
      Effect.orDie
    )
  }
  const deliveredMs = performance.now() - started
  const inbox = yield* messaging.list(recipient.id, { direction: "in" }, Option.some({ page: 1, limit: 1, offset: 0 }))
  return { acceptedMs, deliveredMs, received: inbox.total }
})

const dataDir = mkdtempSync(join(tmpdir(), "switchboard-bulk-"))
const main = Effect.gen(function*() {
  const settings = yield* defaultSettings({
    dataDir,
    databaseUrl: `sqlite:${dataDir}/sb.db`,
    engine: "sandbox",
    sandboxPairDelay: Duration.millis(10),
    pacing: { sendsPerMinute: 0 }
  })
  return yield* Effect.scoped(Effect.provide(program, SwitchboardCore(settings, sandboxEngineLayer(settings))))
})

const { acceptedMs, deliveredMs, received } = await Effect.runPromise(main)
rmSync(dataDir, { recursive: true, force: true })
const rate = (ms: number) => Math.round(TOTAL / (ms / 1000))
console.log(`bulk send through the actor to the sandbox, pacing off, node ${process.version}`)
console.log(`messages           ${TOTAL} in batches of ${BATCH}`)
console.log(`accepted (stored)  ${acceptedMs.toFixed(0)} ms  → ${rate(acceptedMs)} msg/s`)
console.log(`delivered          ${deliveredMs.toFixed(0)} ms  → ${rate(deliveredMs)} msg/s (sent, acked, received and stored by the recipient)`)
console.log(`recipient stored   ${received}${received === TOTAL ? " ✓" : " ✗ MISMATCH"}`)
if (received !== TOTAL) process.exit(1)
