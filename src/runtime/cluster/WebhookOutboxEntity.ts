import { StoreUnavailable } from "../../domain/Errors.js"
import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { CachedCopies } from "../CachedCopies.js"
import { DeliveryRepo } from "../ports/store/DeliveryRepo.js"
import { WebhookRepo } from "../ports/store/WebhookRepo.js"
import { TestResult } from "../../domain/Webhook.js"
import { type DispatcherOptions, makeWebhookDispatcher, WebhookDispatcher } from "../webhooks/Dispatcher.js"
import { shareOf } from "../webhooks/shares.js"
import { ClusterUnreachable, whenUnreachable } from "./ClusterUnreachable.js"

/**
 * The webhook dispatch of a cluster: the webhooks are split into `DISPATCH_SHARES` shares (by
 * a hash of their id), and each share has one entity (`share-<n>`), placed by the cluster on
 * one runner at a time: that runner alone attempts the share's deliveries, so racing runners
 * cannot deliver one twice, and more runners take more shares. The entity of share 0 also
 * turns the outbox into deliveries and wakes the entities whose webhooks got some. Each is
 * kept alive, so when its runner dies the runner that takes its shard over starts it again;
 * deliveries that were in flight are still pending and are attempted again there (at least
 * once, as in one process).
 */
export const WebhookOutboxEntity = Entity.make("WebhookOutbox", [
  Rpc.make("Wake"),
  /** `None`: the webhook is gone. */
  Rpc.make("SendTest", { payload: { webhookId: Schema.String }, success: Schema.Option(TestResult), error: StoreUnavailable }),
  Rpc.make("Redeliver", { payload: { deliveryId: Schema.String }, error: StoreUnavailable })
])

/** How many shares the webhooks are split into: the most runners that add delivery capacity. */
export const DISPATCH_SHARES = 8
/** The entity id of a share's dispatcher. */
export const shareEntityId = (index: number) => `share-${index}`
/** The entity ids of every share's dispatcher (the reconciler wakes them all). */
export const dispatchEntityIds = Array.from({ length: DISPATCH_SHARES }, (_, index) => shareEntityId(index))
/** What `CachedCopies` calls a change of webhooks. */
const WEBHOOKS_TOPIC = "webhooks"
/** How long an API call waits for the dispatcher's runner (a test attempt is bounded by the webhook timeout). */
const CALL_TIMEOUT = Duration.seconds(60)
/** How long the fan-out waits for another share's entity to take a wake-up (it polls anyway). */
const WAKE_TIMEOUT = Duration.seconds(5)

const entityLayer = (options: DispatcherOptions) =>
  WebhookOutboxEntity.toLayer(
    Effect.gen(function*() {
      const index = Number((yield* Entity.CurrentAddress).entityId.slice("share-".length))
      const client = yield* WebhookOutboxEntity.client
      const dispatcher = yield* makeWebhookDispatcher(options, {
        share: { index, count: DISPATCH_SHARES },
        wakeShares: (indices) =>
          Effect.forEach(indices, (other) => Effect.ignore(Effect.timeout(client(shareEntityId(other)).Wake(), WAKE_TIMEOUT)), {
            concurrency: "unbounded",
            discard: true
          })
      })
      const webhooks = yield* WebhookRepo
      yield* Entity.keepAlive(true)
      return WebhookOutboxEntity.of({
        Wake: () => dispatcher.wake,
        SendTest: ({ payload }) =>
          Effect.flatMap(webhooks.find(payload.webhookId), Option.match({
            onNone: () => Effect.succeedNone,
            onSome: (webhook) => Effect.asSome(dispatcher.sendTest(webhook))
          })),
        Redeliver: ({ payload }) => dispatcher.redeliver(payload.deliveryId)
      })
    }),
    { concurrency: "unbounded" }
  )

/**
 * `WebhookDispatcher` on every runner, as a client of the share entities (a call about a
 * webhook goes to its share's); and the entities themselves, which the cluster places on the
 * runners. Each runner wakes them all at start, in the background, so that they run as soon
 * as their shards have a runner; and forgets its copy of the webhooks whenever another runner
 * changes one (the copy is read again within a second anyway).
 */
export const ClusterWebhookDispatcherLive = (options: DispatcherOptions) =>
  Layer.scoped(
    WebhookDispatcher,
    Effect.gen(function*() {
      const client = yield* WebhookOutboxEntity.client
      const deliveries = yield* DeliveryRepo
      const webhooks = yield* WebhookRepo
      const cachedCopies = yield* CachedCopies
      yield* cachedCopies.onChange(WEBHOOKS_TOPIC, webhooks.forget)
      const shareOfWebhook = (webhookId: string) => client(shareEntityId(shareOf(webhookId, DISPATCH_SHARES)))
      const unreachable = () => Effect.die(new ClusterUnreachable({ what: "the webhook dispatcher" }))
      const call = <A, E>(effect: Effect.Effect<A, E>) => effect.pipe(Effect.timeout(CALL_TIMEOUT), whenUnreachable(unreachable))

      yield* Effect.forEach(dispatchEntityIds, (id) =>
        client(id).Wake().pipe(
          Effect.retry(Schedule.spaced("1 second")),
          Effect.catchAllCause((cause) => Effect.logWarning("the webhook dispatcher could not be woken", cause))
        ), { concurrency: "unbounded", discard: true }).pipe(Effect.forkScoped)
      return WebhookDispatcher.of({
        sendTest: (webhook) =>
          Effect.flatMap(call(shareOfWebhook(webhook.id).SendTest({ webhookId: webhook.id })), Option.match({
            // Deleted in the meantime (the caller had just found it): nothing was sent.
            onNone: unreachable,
            onSome: Effect.succeed
          })),
        redeliver: (deliveryId) =>
          Effect.flatMap(deliveries.find(deliveryId), Option.match({
            onNone: () => Effect.void,
            onSome: (delivery) => call(shareOfWebhook(delivery.webhookId).Redeliver({ deliveryId }))
          })),
        wake: client(shareEntityId(0)).Wake().pipe(Effect.timeout(CALL_TIMEOUT), whenUnreachable(() => Effect.void)),
        webhooksChanged: cachedCopies.changed(WEBHOOKS_TOPIC)
      })
    })
  ).pipe(Layer.merge(entityLayer(options)))
