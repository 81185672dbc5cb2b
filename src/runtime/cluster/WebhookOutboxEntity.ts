import { StoreUnavailable } from "../../domain/Errors.js"
import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { WebhookRepo } from "../ports/store/WebhookRepo.js"
import { TestResult } from "../../domain/Webhook.js"
import { type DispatcherOptions, makeWebhookDispatcher, WebhookDispatcher } from "../webhooks/Dispatcher.js"
import { ClusterUnreachable, whenUnreachable } from "./ClusterUnreachable.js"

/**
 * The webhook dispatcher of a cluster: one entity (`outbox`), so exactly one runner at a time
 * turns the outbox into deliveries and attempts them; racing runners cannot deliver an event
 * twice. It is kept alive, so when its runner dies the runner that takes its shard over starts
 * it again; deliveries that were in flight are still pending and are attempted again there
 * (at least once, as in one process).
 */
export const WebhookOutboxEntity = Entity.make("WebhookOutbox", [
  Rpc.make("Wake"),
  /** `None`: the webhook is gone. */
  Rpc.make("SendTest", { payload: { webhookId: Schema.String }, success: Schema.Option(TestResult), error: StoreUnavailable }),
  Rpc.make("Redeliver", { payload: { deliveryId: Schema.String }, error: StoreUnavailable })
])

/** The one dispatcher's entity id. */
export const OUTBOX = "outbox"
/** How long an API call waits for the dispatcher's runner (a test attempt is bounded by the webhook timeout). */
const CALL_TIMEOUT = Duration.seconds(60)

const entityLayer = (options: DispatcherOptions) =>
  WebhookOutboxEntity.toLayer(
    Effect.gen(function*() {
      const dispatcher = yield* makeWebhookDispatcher(options)
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
 * `WebhookDispatcher` on every runner, as a client of the one dispatcher entity; and the
 * entity itself, which the cluster places on one of them. Each runner wakes it at start, in
 * the background, so that it runs as soon as its shard has a runner.
 */
export const ClusterWebhookDispatcherLive = (options: DispatcherOptions) =>
  Layer.scoped(
    WebhookDispatcher,
    Effect.gen(function*() {
      const outbox = (yield* WebhookOutboxEntity.client)(OUTBOX)
      const unreachable = () => Effect.die(new ClusterUnreachable({ what: "the webhook dispatcher" }))
      const call = <A, E>(effect: Effect.Effect<A, E>) => effect.pipe(Effect.timeout(CALL_TIMEOUT), whenUnreachable(unreachable))

      yield* outbox.Wake().pipe(
        Effect.retry(Schedule.spaced("1 second")),
        Effect.catchAllCause((cause) => Effect.logWarning("the webhook dispatcher could not be woken", cause)),
        Effect.forkScoped
      )
      return WebhookDispatcher.of({
        sendTest: (webhook) =>
          Effect.flatMap(call(outbox.SendTest({ webhookId: webhook.id })), Option.match({
            // Deleted in the meantime (the caller had just found it): nothing was sent.
            onNone: unreachable,
            onSome: Effect.succeed
          })),
        redeliver: (deliveryId) => call(outbox.Redeliver({ deliveryId })),
        wake: outbox.Wake().pipe(Effect.timeout(CALL_TIMEOUT), whenUnreachable(() => Effect.void))
      })
    })
  ).pipe(Layer.merge(entityLayer(options)))
