import type { StoreUnavailable } from "../../domain/Errors.js"
import { Clock, Context, Duration, Effect, Either, Layer, Schedule } from "effect"
import { AppSettings } from "../../domain/Settings.js"
import { DeliveryRepo } from "../ports/store/DeliveryRepo.js"
import { EventRepo } from "../ports/store/EventRepo.js"
import { Store } from "../ports/store/Store.js"
import { WebhookRepo, webhookWants, type WebhookRow } from "../ports/store/WebhookRepo.js"
import { Events } from "../Events.js"
import { makeEvent } from "../../domain/makeEvent.js"
import { allowAnyAddress, isPublicAddress } from "../network/addressPolicy.js"
import { makeGuardedAgent } from "../network/guardedAgent.js"
import type { TestResult } from "../../domain/Webhook.js"
import { makeAttempts } from "./attempt.js"
import { makeFanOut } from "./fanOut.js"
import { makeOutcomeRecorder } from "./outcomes.js"
import { defaultRetrySchedule, type RetrySchedule } from "./retrySchedule.js"
import { type DispatchShare, shareOf } from "./shares.js"
import { surviving } from "./surviving.js"
import { makeWakeSignal } from "./wakeSignal.js"
import { makeDeliveryWorker } from "./worker.js"

export interface WebhookDispatcherService {
  /**
   * Sends a `webhook.test` event to this webhook now, once (enabled or not), and says how it
   * went. The event is stored and the delivery recorded like any other, but never retried: a
   * failed test can be sent again with `redeliver`. A `410 Gone` turns the webhook off. The
   * event's `sessionId` is the webhook's, or `"*"` for a webhook of every session.
   */
  readonly sendTest: (webhook: WebhookRow) => Effect.Effect<TestResult, StoreUnavailable>
  /** Makes a delivery pending and due now, whatever became of it; its attempts keep counting. */
  readonly redeliver: (deliveryId: string) => Effect.Effect<void, StoreUnavailable>
  /** Looks at the outbox and the due deliveries now, rather than at the next poll. */
  readonly wake: Effect.Effect<void>
  /**
   * A webhook was created, changed or removed: the dispatchers' copies of the webhooks are
   * stale (this process's copy already knows; a cluster's other runners are told).
   */
  readonly webhooksChanged: Effect.Effect<void>
}

export interface DispatcherOptions {
  /** When failed deliveries are tried again. */
  readonly retrySchedule: RetrySchedule
  /**
   * The outbox is looked at this often even when no event is published (after a restart, say);
   * the worker, asleep until the next delivery is due, looks again after this long at most.
   */
  readonly pollInterval: Duration.Duration
  /** Events taken from the outbox per transaction. */
  readonly batchSize: number
  /** How often dispatched events older than `webhooks.eventRetention` are dropped. */
  readonly pruneInterval: Duration.Duration
}

/** A dispatcher of a cluster: one share of the webhooks, and how to wake the others. */
export interface ClusterShare {
  readonly share: DispatchShare
  /** Tells the dispatchers of these shares that deliveries were made for them. */
  readonly wakeShares: (indices: ReadonlyArray<number>) => Effect.Effect<void>
}

/** The one dispatcher of a single process: every webhook, and no one else to wake. */
const wholeOutbox: ClusterShare = { share: { index: 0, count: 1 }, wakeShares: () => Effect.void }

export const defaultDispatcherOptions: DispatcherOptions = {
  retrySchedule: defaultRetrySchedule,
  pollInterval: Duration.seconds(1),
  batchSize: 100,
  pruneInterval: Duration.hours(1)
}

/**
 * The webhook dispatcher: everything between the outbox and the receivers. Three loops run in
 * its scope: the fan-out (outbox → deliveries; woken by a published event a webhook wants, and polling),
 * the delivery worker (due deliveries → signed POSTs, within the concurrency limits; the
 * deliveries a fan-out pass makes are handed to it as they are, with no claim to read), and the
 * outbox's pruning. Closing the scope stops them; whatever was in flight is attempted again
 * after a restart (delivery is at least once).
 *
 * In a cluster each dispatcher attempts the deliveries of one share of the webhooks; the
 * dispatcher of share 0 also runs the fan-out and the pruning, and wakes the others' workers.
 */
export class WebhookDispatcher extends Context.Tag("switchboard/WebhookDispatcher")<WebhookDispatcher, WebhookDispatcherService>() {
  static readonly layer = (options: Partial<DispatcherOptions> = {}) =>
    Layer.scoped(WebhookDispatcher, makeWebhookDispatcher({ ...defaultDispatcherOptions, ...options }))
}

/** A kept copy of the webhooks, by id: indexed once per copy. */
const byId = (rows: ReadonlyArray<WebhookRow>) => {
  let index = indexes.get(rows)
  if (index === undefined) {
    index = new Map(rows.map((row) => [row.id, row]))
    indexes.set(rows, index)
  }
  return index
}
const indexes = new WeakMap<ReadonlyArray<WebhookRow>, Map<string, WebhookRow>>()

const TEST_MESSAGE = "A test event from Switchboard: the webhook is reachable and its signature can be verified."

/** The dispatcher, its loops running in the current scope. */
export const makeWebhookDispatcher = (options: DispatcherOptions, cluster: ClusterShare = wholeOutbox) =>
  Effect.gen(function*() {
    const { webhooks: settings } = yield* AppSettings
    const webhooks = yield* WebhookRepo
    const { share } = cluster
    const events = yield* Events
    const outbox = yield* EventRepo
    const deliveries = yield* DeliveryRepo
    const transactionally = (yield* Store).transactionally
    const isoNow = Effect.map(Clock.currentTimeMillis, (now) => new Date(now).toISOString())

    // One agent for the dispatcher's life: connections to receivers are reused, and each was
    // made to an address the policy approved when it was looked up.
    const isAllowed = settings.allowPrivate ? allowAnyAddress : isPublicAddress
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => makeGuardedAgent(isAllowed)),
      (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
    )
    // Made before the worker, so that it is still writing while the closing worker waits for
    // the outcomes of the attempts in flight.
    const recorder = yield* makeOutcomeRecorder
    const attempts = yield* makeAttempts({ timeout: settings.timeout, agent, isAllowed }, options.retrySchedule, recorder)
    const worker = yield* makeDeliveryWorker(
      {
        concurrency: settings.concurrency,
        perWebhookConcurrency: settings.perWebhookConcurrency,
        perWebhookConcurrencyMax: settings.perWebhookConcurrencyMax,
        idlePoll: options.pollInterval,
        finishWithin: Duration.sum(settings.timeout, Duration.seconds(1)),
        webhooksServed: Effect.map(webhooks.cached(), (rows) =>
          share.count === 1 ? rows.map((row) => row.id) : rows.filter((row) => shareOf(row.id, share.count) === share.index).map((row) => row.id))
      },
      {
        webhooks: Effect.map(webhooks.cached(), byId),
        webhooksAtHand: () => {
          const rows = webhooks.kept()
          return rows === undefined ? undefined : byId(rows)
        },
        start: attempts.start
      }
    )

    const fanOut = yield* makeFanOut
    const published = yield* makeWakeSignal
    const fanOutPass = Effect.gen(function*() {
      const result = yield* fanOut(options.batchSize)
      const mine = result.deliveries.filter((delivery) => shareOf(delivery.webhookId, share.count) === share.index)
      if (mine.length > 0) yield* worker.take(mine)
      const shares = new Set(result.deliveries.map((delivery) => shareOf(delivery.webhookId, share.count)))
      shares.delete(share.index)
      if (shares.size > 0) yield* Effect.forkDaemon(cluster.wakeShares([...shares]))
      if (!result.more) yield* published.wait(options.pollInterval)
    })

    const prune = Effect.gen(function*() {
      const before = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(settings.eventRetention)).toISOString()
      const pruned = yield* outbox.pruneSettled(before)
      if (pruned > 0) yield* Effect.logDebug("outbox pruned").pipe(Effect.annotateLogs({ events: pruned, before }))
    })

    if (share.index === 0) {
      // Observed before the loops start: an event published from here on that a webhook wants
      // wakes the fan-out. One that none of the webhooks at hand wants is marked dispatched by
      // the next poll's pass, with the others of that second: a gateway without webhooks makes
      // no pass (three statements in a transaction) per event.
      yield* events.observe((event) => {
        if (event.event === "webhook.test") return
        const rows = webhooks.kept()
        if (rows === undefined || rows.some((row) => webhookWants(row, event))) published.raiseNow()
      })
      yield* Effect.forkScoped(Effect.forever(surviving("webhook fan-out", options.pollInterval)(fanOutPass)))
      yield* Effect.forkScoped(Effect.repeat(surviving("outbox pruning")(prune), Schedule.spaced(options.pruneInterval)))
    }
    yield* Effect.forkScoped(worker.run)

    const sendTest = Effect.fn("WebhookDispatcher.sendTest")(
      function*(webhook: WebhookRow) {
        const at = yield* Clock.currentTimeMillis
        const event = makeEvent("webhook.test", webhook.sessionId ?? "*", { webhookId: webhook.id, message: TEST_MESSAGE }, new Date(at))
        const create = transactionally(Effect.gen(function*() {
          yield* outbox.appendDispatched(event)
          const [id] = yield* deliveries.create(event, [webhook.id], event.timestamp)
          return { id: id!, webhookId: webhook.id, eventId: event.id, attempts: 0, event }
        }))
        return yield* worker.withNewDelivery(create, (delivery) =>
          Effect.map(Effect.flatMap(webhooks.find(webhook.id), (found) => attempts.test(delivery, found)), Either.match({
            onLeft: (reason): TestResult => ({ deliveryId: delivery.id, delivered: false, statusCode: null, error: reason, durationMs: 0 }),
            onRight: ({ delivered, statusCode, error, durationMs }): TestResult => ({ deliveryId: delivery.id, delivered, statusCode, error, durationMs })
          })))
      }
    )

    const redeliver = Effect.fn("WebhookDispatcher.redeliver")(function*(deliveryId: string) {
      yield* deliveries.redeliver(deliveryId, yield* isoNow)
      yield* worker.wake
    })

    return WebhookDispatcher.of({
      sendTest,
      redeliver,
      wake: Effect.zipRight(published.raise, worker.wake),
      webhooksChanged: webhooks.forget
    })
  })
