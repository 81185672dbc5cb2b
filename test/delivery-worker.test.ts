import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Exit, Layer } from "effect"
import { storeFromSettings } from "../src/app/App.js"
import { defaultSettings } from "../src/app/Config.js"
import { makeEvent } from "../src/domain/makeEvent.js"
import { Events } from "../src/runtime/Events.js"
import { DeliveryRepo } from "../src/runtime/ports/store/DeliveryRepo.js"
import { WebhookRepo, type WebhookRow } from "../src/runtime/ports/store/WebhookRepo.js"
import type { AttemptCallbacks, DeliveryRef } from "../src/runtime/webhooks/attempt.js"
import { makeDeliveryWorker, type WorkerLimits } from "../src/runtime/webhooks/worker.js"
import { webhookRow } from "./support/fixtures.js"
import { testSettings } from "./support/gateway.js"

/**
 * The delivery worker's bookkeeping on a real SQLite Store: which deliveries it claims and
 * starts, when, and how many at once. Its attempts are answered by the test, at the moment the
 * test chooses (the HTTP side is proven in webhook-delivery.test.ts), and their outcomes are
 * written to the Store as the outcome recorder writes them.
 */

/** A Store with `count` webhooks, and a way to make deliveries due now for one of them. */
const storeWithWebhooks = (count: number) =>
  Effect.gen(function*() {
    const settings = yield* testSettings({ webhooks: (yield* defaultSettings()).webhooks })
    const context = yield* Layer.build(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings)))).pipe(Effect.orDie)
    const deliveries = Context.get(context, DeliveryRepo)
    const webhooks = Array.from({ length: count }, (_, n) => webhookRow(`http://127.0.0.1:9/${n}`))
    for (const row of webhooks) yield* Context.get(context, WebhookRepo).insert(row)
    const makeDue = (webhook: WebhookRow, n: number) =>
      Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) =>
        deliveries.create(makeEvent("message.ack", "s1", { messageId: `m${i}`, chatId: "15550001111@c.us", status: "read", ack: 3, previousStatus: "delivered" }), [webhook.id], new Date(Date.now() - 60_000 + i).toISOString()), { discard: true })
    return { context, deliveries, webhooks, makeDue }
  })

/** How an attempt is answered: delivered or not, after some milliseconds. */
type Answer = { readonly delivered: boolean; readonly afterMs: number }

/** Starts the worker with these limits; each attempt is answered per `answer`, its outcome written, and noted in `started`. */
const runWorker = (
  store: Effect.Effect.Success<ReturnType<typeof storeWithWebhooks>>,
  limits: Pick<WorkerLimits, "concurrency" | "perWebhookConcurrency" | "perWebhookConcurrencyMax" | "idlePoll">,
  answer: (delivery: DeliveryRef) => Answer
) =>
  Effect.gen(function*() {
    const started: Array<{ readonly delivery: DeliveryRef; readonly at: number }> = []
    const byId = new Map(store.webhooks.map((row) => [row.id, row]))
    const start = (delivery: DeliveryRef, _webhook: WebhookRow | undefined, callbacks: AttemptCallbacks) => {
      started.push({ delivery, at: Date.now() })
      const { afterMs, delivered } = answer(delivery)
      setTimeout(() => {
        const at = new Date().toISOString()
        const statusCode = delivered ? 200 : 500
        callbacks.requestDone({ delivered, statusCode, error: null, at, durationMs: afterMs })
        const outcome = {
          attempt: { attempt: delivery.attempts + 1, at, statusCode, error: null, durationMs: afterMs },
          status: delivered ? "delivered" as const : "pending" as const,
          nextAttemptAt: delivered ? null : new Date(Date.now() + 60_000).toISOString()
        }
        void Effect.runPromise(store.deliveries.recordAttempts([{ deliveryId: delivery.id, outcome }])).then(() => callbacks.written(Exit.void))
      }, afterMs)
    }
    const worker = yield* makeDeliveryWorker(
      { ...limits, finishWithin: Duration.seconds(1), webhooksServed: Effect.succeed(store.webhooks.map((row) => row.id)) },
      { webhooks: Effect.succeed(byId), webhooksAtHand: () => byId, start }
    ).pipe(Effect.provideService(DeliveryRepo, store.deliveries))
    yield* Effect.forkScoped(worker.run)
    return { worker, started }
  })

/** Waits until `condition` holds, checking every 10 ms, for at most `within` ms; says whether it held. */
const within = (ms: number, condition: () => boolean) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    while (!condition() && Date.now() < deadline) yield* Effect.sleep("10 millis")
    return condition()
  })

describe("the webhook delivery worker", () => {
  it.scopedLive("a backlog in the Store goes out without pausing while a fast receiver's limit grows", () =>
    Effect.gen(function*() {
      const store = yield* storeWithWebhooks(1)
      yield* store.makeDue(store.webhooks[0]!, 300)
      // A poll far longer than the backlog takes: only the worker's own wake-ups move it along.
      const { started } = yield* runWorker(
        store,
        { concurrency: 32, perWebhookConcurrency: 4, perWebhookConcurrencyMax: 16, idlePoll: Duration.seconds(5) },
        () => ({ delivered: true, afterMs: 2 })
      )
      expect(yield* within(3_000, () => started.length >= 300)).toBe(true)
      expect(new Set(started.map(({ delivery }) => delivery.id)).size).toBe(300) // each once
    }))

  it.scopedLive("a receiver that turns slow and failing after a fast spell lets go of what it held ahead: another webhook's backlog is claimed at once", () =>
    Effect.gen(function*() {
      const store = yield* storeWithWebhooks(2)
      const [turning, other] = [store.webhooks[0]!, store.webhooks[1]!]
      yield* store.makeDue(turning, 300)
      // Room for 64 over all (4 × 16 claimed ahead): the turning one, at its 4 in flight, may hold all of it.
      let answered = 0
      const { started } = yield* runWorker(
        store,
        { concurrency: 4, perWebhookConcurrency: 1, perWebhookConcurrencyMax: 4, idlePoll: Duration.seconds(1) },
        (delivery) => delivery.webhookId !== turning.id || ++answered <= 60 ? { delivered: true, afterMs: 2 } : { delivered: false, afterMs: 1_000 }
      )
      yield* within(3_000, () => answered > 64) // failing now, one a second
      yield* store.makeDue(other, 60)
      // Without letting go, the other webhook would get a slot of room as each failing answer comes: one a second.
      const startedForOther = () => started.filter(({ delivery }) => delivery.webhookId === other.id).length
      expect(yield* within(3_000, () => startedForOther() === 60)).toBe(true)
    }))

  for (const gatedStep of ["reading the webhooks", "the query"] as const) {
  it.scopedLive(`a delivery handed over by the fan-out while a claim is under way (${gatedStep}) is attempted once`, () =>
    Effect.gen(function*() {
      const store = yield* storeWithWebhooks(1)
      const webhook = store.webhooks[0]!
      yield* store.makeDue(webhook, 1)
      const [made] = yield* store.deliveries.due(new Date().toISOString(), 10, [{ webhookId: webhook.id, room: 10, except: [] }])

      // The worker's first claim is under way (a Postgres round trip, a busy Store) until the gate opens.
      const claimOut = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const held = <A, E>(step: Effect.Effect<A, E>) => Effect.zipRight(Deferred.succeed(claimOut, undefined), Effect.zipRight(Deferred.await(gate), step))
      let claims = 0
      let reads = 0
      const real = store.deliveries
      const slowFirstClaim: typeof real = {
        ...real,
        due: (...args) => gatedStep === "the query" && claims++ === 0 ? held(real.due(...args)) : real.due(...args)
      }
      const served = Effect.suspend(() => Effect.succeed([webhook.id]))
      const webhooksServed = Effect.suspend(() => gatedStep === "reading the webhooks" && reads++ === 0 ? held(served) : served)
      // Its attempt is answered in 5 ms, the outcome left unwritten: the Store still has it pending, as the claim's snapshot would.
      const started: Array<string> = []
      const byId = new Map([[webhook.id, webhook]])
      const worker = yield* makeDeliveryWorker(
        {
          concurrency: 4,
          perWebhookConcurrency: 2,
          perWebhookConcurrencyMax: 2,
          idlePoll: Duration.seconds(5),
          finishWithin: Duration.seconds(1),
          webhooksServed
        },
        {
          webhooks: Effect.succeed(byId),
          webhooksAtHand: () => byId,
          start: (delivery, _webhook, callbacks) => {
            started.push(delivery.id)
            setTimeout(() => {
              callbacks.requestDone()
              callbacks.written(Exit.void)
            }, 5)
          }
        }
      ).pipe(Effect.provideService(DeliveryRepo, slowFirstClaim))
      yield* Effect.forkScoped(worker.run)
      yield* Deferred.await(claimOut)
      yield* worker.take([made!]) // attempted at once, and let go before the claim answers
      yield* Effect.sleep("50 millis")
      yield* Deferred.succeed(gate, undefined)
      yield* Effect.sleep("100 millis")
      expect(started).toEqual([made!.id])
    }))
  }
})
