/** The shapes the REST API sends and takes (src/http/Api.ts, served as OpenAPI at /api/docs), and its refusals as `ApiError`. */

export type SessionStatus =
  | "created"
  | "initializing"
  | "qr_ready"
  | "authenticating"
  | "ready"
  | "disconnected"
  | "stopped"
  | "logged_out"
  | "failed"

export const sessionStatuses: ReadonlyArray<SessionStatus> = [
  "created",
  "initializing",
  "qr_ready",
  "authenticating",
  "ready",
  "disconnected",
  "stopped",
  "logged_out",
  "failed"
]

export interface Session {
  readonly id: string
  readonly name: string
  readonly status: SessionStatus
  readonly engine: string
  readonly phone: string | null
  readonly pushName: string | null
  readonly proxy: { readonly url: string } | null
  readonly lastError: { readonly code: string; readonly message: string; readonly at: string } | null
  readonly createdAt: string
  readonly updatedAt: string
}

export interface QrCode {
  readonly qr: string
  readonly image: string
  readonly expiresAt: string
}

export interface Me {
  readonly id: string
  readonly phone: string
  readonly lid: string | null
  readonly pushName: string | null
}

export type MessageStatus = "pending" | "sent" | "delivered" | "read" | "played" | "failed"
export type MediaKind = "image" | "video" | "audio" | "document"

export interface Message {
  readonly id: string
  readonly sessionId: string
  readonly chatId: string
  readonly from: string
  readonly to: string
  readonly fromMe: boolean
  readonly type: string
  readonly text: string | null
  readonly caption: string | null
  readonly media: { readonly mimetype: string; readonly filename: string | null; readonly size: number | null; readonly ptt: boolean } | null
  readonly status: MessageStatus
  readonly ack: number
  readonly error: { readonly code: string; readonly message: string } | null
  readonly timestamp: string
  readonly quotedMessageId: string | null
  readonly batchId: string | null
  readonly reactions: ReadonlyArray<{ readonly emoji: string; readonly from: string; readonly at: string }>
  readonly statusHistory: ReadonlyArray<{ readonly status: MessageStatus; readonly at: string }>
}

export interface SendResult {
  readonly messageId: string
  readonly chatId: string
  readonly status: MessageStatus
  readonly timestamp: string
}

export interface Webhook {
  readonly id: string
  readonly sessionId: string | null
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly enabled: boolean
  readonly headers: Readonly<Record<string, string>>
  readonly maxAttempts: number
  readonly disabledReason: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

export interface CreatedWebhook extends Webhook {
  readonly secret: string
}

export interface WebhookInput {
  readonly url?: string
  readonly events?: ReadonlyArray<string>
  readonly headers?: Readonly<Record<string, string>>
  readonly enabled?: boolean
  readonly maxAttempts?: number
}

export interface DeliveryAttempt {
  readonly attempt: number
  readonly at: string
  readonly statusCode: number | null
  readonly error: string | null
  readonly durationMs: number
}

export interface Delivery {
  readonly id: string
  readonly webhookId: string
  readonly eventId: string
  readonly event: string
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly nextAttemptAt: string | null
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly createdAt: string
  readonly updatedAt: string
  readonly attemptLog: ReadonlyArray<DeliveryAttempt>
}

export interface TestResult {
  readonly deliveryId: string
  readonly delivered: boolean
  readonly statusCode: number | null
  readonly error: string | null
  readonly durationMs: number
}

export type Role = "admin" | "operator" | "viewer"

export interface ApiKey {
  readonly id: string
  readonly name: string
  readonly role: Role
  readonly status: "active" | "expired" | "revoked"
  readonly prefix: string | null
  readonly allowedSessions: ReadonlyArray<string> | null
  readonly allowedIps: ReadonlyArray<string> | null
  readonly rateLimitPerMinute: number | null
  readonly expiresAt: string | null
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
  readonly createdAt: string
  readonly updatedAt: string
}

export interface CreatedApiKey extends ApiKey {
  readonly key: string
}

export interface ApiKeyInput {
  readonly name: string
  readonly role: Role
  readonly allowedSessions?: ReadonlyArray<string> | null
  readonly allowedIps?: ReadonlyArray<string> | null
  readonly expiresAt?: string | null
}

export interface AuditRecord {
  readonly id: string
  readonly at: string
  readonly requestId: string
  readonly keyId: string | null
  readonly keyName: string | null
  readonly clientIp: string
  readonly method: string
  readonly action: string
  readonly target: string
  readonly sessionId: string | null
  readonly outcome: "success" | "denied" | "failure"
  readonly status: number
  readonly code: string | null
}

/** The envelope of every event (webhook body, SSE `data:`). */
export interface DomainEvent {
  readonly id: string
  readonly event: string
  readonly sessionId: string
  readonly timestamp: string
  readonly data: unknown
}

export const eventKinds: ReadonlyArray<string> = [
  "session.status",
  "session.qr",
  "message.received",
  "message.sent",
  "message.ack",
  "message.failed",
  "message.reaction",
  "message.revoked",
  "group.join",
  "group.leave",
  "group.update",
  "group.participants",
  "label.update"
]

export interface Pagination {
  readonly page: number
  readonly limit: number
  readonly total: number
  readonly total_pages: number
}

export interface PageOf<T> {
  readonly items: ReadonlyArray<T>
  readonly pagination: Pagination
}

/** The API's error body: `{statusCode, error, code, message, details?}`. */
export interface ErrorBody {
  readonly statusCode: number
  readonly error: string
  readonly code: string
  readonly message: string
  readonly details?: unknown
}

/** A refusal of the API (or no answer at all: `statusCode` 0, code `NETWORK_ERROR`). */
export class ApiError extends Error {
  readonly statusCode: number
  readonly error: string
  readonly code: string
  readonly details: unknown

  constructor(body: ErrorBody) {
    super(body.message)
    this.name = "ApiError"
    this.statusCode = body.statusCode
    this.error = body.error
    this.code = body.code
    this.details = body.details
  }
}

/** Anything thrown, as an ApiError, so every failure is shown the same way. */
export const toApiError = (cause: unknown): ApiError => {
  if (cause instanceof ApiError) return cause
  const message = cause instanceof Error ? cause.message : String(cause)
  return new ApiError({ statusCode: 0, error: "Error", code: "CLIENT_ERROR", message })
}
