import { existingSession } from "./sessionLookup.js"
import type { StoreUnavailable } from "../domain/Errors.js"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { lookup } from "node:dns/promises"
import { AppSettings } from "../domain/Settings.js"
import { DeliveryRepo } from "../runtime/ports/store/DeliveryRepo.js"
import { SessionRepo } from "../runtime/ports/store/SessionRepo.js"
import { WebhookRepo, type WebhookRow, type WebhookScope } from "../runtime/ports/store/WebhookRepo.js"
import { WebhookDispatcher } from "../runtime/webhooks/Dispatcher.js"
import { NotFound, ValidationFailed } from "../domain/Errors.js"
import { uuidv7 } from "../domain/uuidv7.js"
import { allowAnyAddress, isPublicAddress } from "../runtime/network/addressPolicy.js"
import { ipLiteralOf } from "../runtime/network/mediaUrl.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import type { CreateWebhookRequest, Delivery, TestResult, UpdateWebhookRequest, Webhook } from "../domain/Webhook.js"

export interface WebhooksService {
  /** A webhook for every session's events (`sessionId` null) or one session's; the secret is in this answer only. */
  readonly create: (sessionId: string | null, request: CreateWebhookRequest) => Effect.Effect<Webhook & { readonly secret: string }, NotFound | ValidationFailed | StoreUnavailable>
  readonly list: (scope: WebhookScope, page: Option.Option<PageRequest>) => Effect.Effect<Page<Webhook>, NotFound | StoreUnavailable>
  readonly get: (webhookId: string) => Effect.Effect<Webhook, NotFound | StoreUnavailable>
  readonly update: (webhookId: string, request: UpdateWebhookRequest) => Effect.Effect<Webhook, NotFound | ValidationFailed | StoreUnavailable>
  readonly remove: (webhookId: string) => Effect.Effect<void, NotFound | StoreUnavailable>
  /** Sends a `webhook.test` event to this webhook now, once, and says how it went. */
  readonly test: (webhookId: string) => Effect.Effect<TestResult, NotFound | StoreUnavailable>
  readonly deliveries: (webhookId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Delivery>, NotFound | StoreUnavailable>
  /** Sends a delivery again, whatever became of it. */
  readonly redeliver: (deliveryId: string) => Effect.Effect<Delivery, NotFound | StoreUnavailable>
  /** The webhook a delivery belongs to. */
  readonly webhookOfDelivery: (deliveryId: string) => Effect.Effect<Webhook, NotFound | StoreUnavailable>
}

export class Webhooks extends Context.Tag("switchboard/Webhooks")<Webhooks, WebhooksService>() {
  static readonly layer = Layer.effect(Webhooks, Effect.suspend(() => make))
}

const webhookNotFound = (id: string) => new NotFound({ code: "WEBHOOK_NOT_FOUND", message: `Webhook ${id} does not exist` })

/** What callers see: header names, never their values (they are often credentials). */
const toWebhook = ({ secret: _secret, ...row }: WebhookRow): Webhook => ({
  ...row,
  events: [...row.events],
  headers: Object.fromEntries(Object.keys(row.headers).map((name) => [name, "***"]))
})

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`

const make = Effect.gen(function*() {
  const repo = yield* WebhookRepo
  const deliveries = yield* DeliveryRepo
  const sessions = yield* SessionRepo
  const dispatcher = yield* WebhookDispatcher
  const { webhooks: settings } = yield* AppSettings
  const isAllowed = settings.allowPrivate ? allowAnyAddress : isPublicAddress

  const found = (id: string) =>
    Effect.flatMap(repo.find(id), Option.match({ onNone: () => Effect.fail(webhookNotFound(id)), onSome: Effect.succeed }))

  const foundDelivery = (deliveryId: string) =>
    Effect.flatMap(deliveries.find(deliveryId), Option.match({
      onNone: () => Effect.fail(new NotFound({ code: "DELIVERY_NOT_FOUND", message: `Delivery ${deliveryId} does not exist` })),
      onSome: Effect.succeed
    }))

  /**
   * The SSRF guard at create time (it runs again on every delivery): the URL must resolve, and
   * only to addresses the policy allows. The message names the host, never the whole URL.
   */
  const checkDestination = Effect.fn("Webhooks.checkDestination")(function*(text: string) {
    const url = new URL(text)
    const refuse = (code: string, message: string) => new ValidationFailed({ code, message, details: { host: url.hostname } })
    const literal = ipLiteralOf(url)
    const addresses = literal !== undefined
      ? [literal]
      : yield* Effect.tryPromise({
        try: () => lookup(url.hostname, { all: true }).then((found) => found.map((entry) => entry.address)),
        catch: () => refuse("WEBHOOK_URL_UNRESOLVABLE", `${url.hostname} does not resolve`)
      })
    if (addresses.length === 0 || !addresses.every(isAllowed)) {
      return yield* refuse(
        "WEBHOOK_URL_NOT_ALLOWED",
        `${url.hostname} resolves to a loopback, private or link-local address (set WEBHOOK_ALLOW_PRIVATE=true to allow)`
      )
    }
  })

  const service: WebhooksService = {
    create: Effect.fn("Webhooks.create")(function*(sessionId, request) {
      if (sessionId !== null) yield* existingSession(sessions, sessionId)
      yield* checkDestination(request.url)
      const millis = yield* Clock.currentTimeMillis
      const now = new Date(millis).toISOString()
      const row: WebhookRow = {
        id: uuidv7(millis),
        sessionId,
        url: request.url,
        events: request.events ?? ["*"],
        enabled: request.enabled ?? true,
        headers: request.headers ?? {},
        maxAttempts: request.maxAttempts ?? 8,
        secret: newSecret(),
        disabledReason: null,
        createdAt: now,
        updatedAt: now
      }
      yield* repo.insert(row)
      yield* dispatcher.webhooksChanged
      return { ...toWebhook(row), secret: row.secret }
    }),
    list: Effect.fn("Webhooks.list")(function*(scope, page) {
      if ("sessionId" in scope) yield* existingSession(sessions, scope.sessionId)
      const listed = yield* repo.list(scope, page)
      return { ...listed, items: listed.items.map(toWebhook) }
    }),
    get: Effect.fn("Webhooks.get")((id) => Effect.map(found(id), toWebhook)),
    update: Effect.fn("Webhooks.update")(function*(id, request) {
      yield* found(id)
      if (request.url !== undefined) yield* checkDestination(request.url)
      // Turning a webhook back on clears why it was turned off.
      yield* repo.update(id, { ...request, ...(request.enabled === true ? { disabledReason: null } : {}) })
      yield* dispatcher.webhooksChanged
      return toWebhook(yield* found(id))
    }),
    remove: Effect.fn("Webhooks.remove")((id) => Effect.zipRight(found(id), Effect.zipRight(repo.remove(id), dispatcher.webhooksChanged))),
    test: Effect.fn("Webhooks.test")((id) => Effect.flatMap(found(id), dispatcher.sendTest)),
    deliveries: Effect.fn("Webhooks.deliveries")((id, page) => Effect.zipRight(found(id), deliveries.list(id, page))),
    redeliver: Effect.fn("Webhooks.redeliver")(function*(deliveryId) {
      yield* foundDelivery(deliveryId)
      yield* dispatcher.redeliver(deliveryId)
      return Option.getOrThrow(yield* deliveries.find(deliveryId))
    }),
    webhookOfDelivery: Effect.fn("Webhooks.webhookOfDelivery")((deliveryId) =>
      Effect.flatMap(foundDelivery(deliveryId), (delivery) => Effect.map(found(delivery.webhookId), toWebhook)))
  }
  return service
})
