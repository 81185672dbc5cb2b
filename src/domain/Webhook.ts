import { Schema } from "effect"
import { EventKind } from "./Events.js"

/** `["*"]` (every event) or a list of kinds. */
export const WebhookEvents = Schema.Array(Schema.Union(Schema.Literal("*"), EventKind)).pipe(
  Schema.minItems(1, { message: () => 'events lists at least one kind, or ["*"]' }),
  Schema.maxItems(32)
)

/** Header names a webhook may not set: the transport's own and the signature's. */
const reservedHeader = /^(host|content-length|content-type|connection|transfer-encoding|webhook-.*|x-webhook-.*)$/i

const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/

/**
 * Extra headers for every delivery (often credentials: never shown back). Names are checked on
 * the whole record: a Record's key schema alone would silently drop a bad name, not refuse it.
 */
export const WebhookHeaders = Schema.Record({
  key: Schema.String,
  value: Schema.String.pipe(
    Schema.maxLength(1024),
    Schema.pattern(/^[^\r\n]*$/, { message: () => "a header value is one line" })
  )
}).pipe(
  Schema.filter((headers) => Object.keys(headers).length <= 20, { message: () => "at most 20 headers" }),
  Schema.filter((headers) => Object.keys(headers).every((name) => headerName.test(name)), {
    message: () => "a header name is a token of 1–64 characters"
  }),
  Schema.filter((headers) => !Object.keys(headers).some((name) => reservedHeader.test(name)), {
    message: () => "content-type, host, webhook-* and x-webhook-* are set by the gateway itself"
  })
)

const url = Schema.String.pipe(
  Schema.maxLength(2048),
  Schema.filter((value) => {
    try {
      const parsed = new URL(value)
      return parsed.protocol === "http:" || parsed.protocol === "https:"
    } catch {
      return false
    }
  }, { message: () => "url must be an http(s) URL" })
)

export const maxAttempts = Schema.Int.pipe(Schema.between(1, 20, { message: () => "maxAttempts is 1–20" }))

export const CreateWebhookRequest = Schema.Struct({
  url,
  events: Schema.optional(WebhookEvents),
  headers: Schema.optional(WebhookHeaders),
  enabled: Schema.optional(Schema.Boolean),
  maxAttempts: Schema.optional(maxAttempts)
})
export type CreateWebhookRequest = typeof CreateWebhookRequest.Type

export const UpdateWebhookRequest = Schema.partial(CreateWebhookRequest)
export type UpdateWebhookRequest = typeof UpdateWebhookRequest.Type

export const Webhook = Schema.Struct({
  id: Schema.String,
  sessionId: Schema.NullOr(Schema.String).annotations({ description: "null: every session's events" }),
  url: Schema.String,
  events: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  headers: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({ description: "names only: values are shown as ***" }),
  maxAttempts: Schema.Number,
  disabledReason: Schema.NullOr(Schema.String).annotations({ description: "why the gateway turned it off (410 Gone)" }),
  createdAt: Schema.String,
  updatedAt: Schema.String
}).annotations({ identifier: "Webhook" })
export type Webhook = typeof Webhook.Type

/** The answer to a create: the only time the secret is shown. */
export const CreatedWebhook = Schema.Struct({
  ...Webhook.fields,
  secret: Schema.String.annotations({ description: "whsec_…; shown once, keep it to verify signatures" })
}).annotations({ identifier: "CreatedWebhook" })

export const DeliveryStatus = Schema.Literal("pending", "delivered", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Number,
  at: Schema.String,
  statusCode: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Number
})
export type DeliveryAttempt = typeof DeliveryAttempt.Type

export const Delivery = Schema.Struct({
  id: Schema.String,
  webhookId: Schema.String,
  eventId: Schema.String,
  event: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Number,
  nextAttemptAt: Schema.NullOr(Schema.String),
  lastStatusCode: Schema.NullOr(Schema.Number),
  lastError: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  attemptLog: Schema.Array(DeliveryAttempt)
}).annotations({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

export const TestResult = Schema.Struct({
  deliveryId: Schema.String,
  delivered: Schema.Boolean,
  statusCode: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Number
})
export type TestResult = typeof TestResult.Type
