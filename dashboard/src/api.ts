/**
 * A typed client for the Switchboard REST API (docs/API.md). The API lives on its own port:
 * the gateway serves `config.json` (`{"apiPort": 2785}`) next to the dashboard's files, and
 * every call goes to that port on the host the page was loaded from, with `X-API-Key`.
 */

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

// ---------------------------------------------------------------------------------------------
// Where the API is, and the key

const KEY_STORAGE = "switchboard.apiKey"
const DEFAULT_API_PORT = 2785

let apiBase = `${location.protocol}//${location.hostname}:${DEFAULT_API_PORT}`

/** Reads `./config.json` once at start-up; without it (e.g. under `vite` dev) the API is on 2785. */
export const loadConfig = async (): Promise<string> => {
  if (import.meta.env.VITE_API_SAME_ORIGIN === "1") {
    apiBase = location.origin
    return apiBase
  }
  try {
    const response = await fetch("./config.json", { cache: "no-store", headers: { accept: "application/json" } })
    if (response.ok && (response.headers.get("content-type") ?? "").includes("json")) {
      const config = (await response.json()) as { apiPort?: unknown }
      if (typeof config.apiPort === "number" && Number.isInteger(config.apiPort) && config.apiPort > 0) {
        apiBase = `${location.protocol}//${location.hostname}:${config.apiPort}`
      }
    }
  } catch {
    // No config.json: keep the default port.
  }
  return apiBase
}

export const getApiBase = () => apiBase

/** The key lives in sessionStorage only: gone when the tab closes, never in the URL. */
export const keyStore = {
  get: (): string | null => {
    try {
      return sessionStorage.getItem(KEY_STORAGE)
    } catch {
      return null
    }
  },
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE)
}

let onUnauthorized: (error: ApiError) => void = () => {}

/** Called on any 401: the app goes back to sign-in with the API's message. */
export const setUnauthorizedHandler = (handler: (error: ApiError) => void) => {
  onUnauthorized = handler
}

export const reportUnauthorized = (error: ApiError) => onUnauthorized(error)

// ---------------------------------------------------------------------------------------------
// Requests

export type Query = Readonly<Record<string, string | number | undefined | null>>

export const urlOf = (path: string, query?: Query) => {
  const url = new URL(`${apiBase}/api${path}`)
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value))
  }
  return url.toString()
}

const reasonPhrase = (status: number) =>
  ({ 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 413: "Payload Too Large", 415: "Unsupported Media Type", 429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout" })[status] ?? "Error"

/** The error of a failed answer, from its JSON body when it has one. */
export const errorOf = async (response: Response): Promise<ApiError> => {
  const text = await response.text().catch(() => "")
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>
    if (typeof body === "object" && body !== null && typeof body.message === "string") {
      return new ApiError({
        statusCode: typeof body.statusCode === "number" ? body.statusCode : response.status,
        error: typeof body.error === "string" ? body.error : reasonPhrase(response.status),
        code: typeof body.code === "string" ? body.code : `HTTP_${response.status}`,
        message: body.message,
        details: body.details
      })
    }
  } catch {
    // Not JSON: fall through.
  }
  return new ApiError({
    statusCode: response.status,
    error: reasonPhrase(response.status),
    code: `HTTP_${response.status}`,
    message: text.trim().slice(0, 300) || `the API answered ${response.status}`
  })
}

export interface RequestOptions {
  readonly query?: Query
  readonly json?: unknown
  readonly form?: FormData
  readonly signal?: AbortSignal
  /** A key to use instead of the stored one (sign-in checks a key before keeping it). */
  readonly key?: string
}

export const authHeaders = (key?: string): Record<string, string> => {
  const value = key ?? keyStore.get()
  return value === null ? {} : { "X-API-Key": value }
}

export const request = async <T>(method: string, path: string, options: RequestOptions = {}): Promise<T> => {
  const headers: Record<string, string> = { accept: "application/json", ...authHeaders(options.key) }
  let body: BodyInit | undefined
  if (options.form !== undefined) body = options.form
  else if (options.json !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.json)
  }
  let response: Response
  try {
    response = await fetch(urlOf(path, options.query), {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      mode: "cors",
      credentials: "omit",
      cache: "no-store"
    })
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause
    throw new ApiError({
      statusCode: 0,
      error: "Network Error",
      code: "NETWORK_ERROR",
      message: `could not reach the API at ${apiBase} (is the gateway running, and does it allow this origin?)`
    })
  }
  if (!response.ok) {
    const error = await errorOf(response)
    // A sign-in check reports its own 401; everywhere else a 401 ends the session.
    if (response.status === 401 && options.key === undefined) onUnauthorized(error)
    throw error
  }
  if (response.status === 204) return undefined as T
  const text = await response.text()
  return (text === "" ? undefined : JSON.parse(text)) as T
}

/** A whole list (no page/limit sent: `{data: [...]}`). */
export const listAll = async <T>(path: string, query?: Query): Promise<ReadonlyArray<T>> => {
  const body = await request<{ data: ReadonlyArray<T> | PageOf<T> }>("GET", path, query === undefined ? {} : { query })
  return Array.isArray(body.data) ? body.data : (body.data as PageOf<T>).items
}

/** One page (page/limit sent: `{data: {items, pagination}}`). */
export const listPage = async <T>(path: string, page: number, limit: number, query?: Query): Promise<PageOf<T>> => {
  const body = await request<{ data: ReadonlyArray<T> | PageOf<T> }>("GET", path, { query: { ...query, page, limit } })
  if (Array.isArray(body.data)) {
    const items = body.data as ReadonlyArray<T>
    return { items, pagination: { page: 1, limit: items.length, total: items.length, total_pages: 1 } }
  }
  return body.data as PageOf<T>
}

const enc = encodeURIComponent

export const api = {
  /** Checks a key before it is kept: `GET /api/sessions?limit=1`. */
  checkKey: (key: string) => request<unknown>("GET", "/sessions", { query: { limit: 1 }, key }),

  sessions: {
    list: () => listAll<Session>("/sessions"),
    get: (id: string) => request<Session>("GET", `/sessions/${enc(id)}`),
    create: (body: { name: string; proxy?: { url: string }; autoStart?: boolean }) =>
      request<Session>("POST", "/sessions", { json: body }),
    action: (id: string, action: "start" | "stop" | "restart" | "logout") =>
      request<Session>("POST", `/sessions/${enc(id)}/${action}`),
    remove: (id: string) => request<void>("DELETE", `/sessions/${enc(id)}`),
    qr: (id: string) => request<QrCode>("GET", `/sessions/${enc(id)}/qr`),
    pairingCode: (id: string, phoneNumber: string) =>
      request<{ code: string }>("POST", `/sessions/${enc(id)}/pairing-code`, { json: { phoneNumber } }),
    me: (id: string) => request<Me>("GET", `/sessions/${enc(id)}/me`),
    getProxy: (id: string) => request<{ url: string } | null>("GET", `/sessions/${enc(id)}/proxy`),
    setProxy: (id: string, url: string | null) =>
      request<{ url: string } | null>("PUT", `/sessions/${enc(id)}/proxy`, { json: { url } })
  },

  messages: {
    sendText: (sessionId: string, chatId: string, text: string) =>
      request<SendResult>("POST", `/sessions/${enc(sessionId)}/messages/send-text`, { json: { chatId, text } }),
    sendMedia: (sessionId: string, kind: MediaKind, form: FormData) =>
      request<SendResult>("POST", `/sessions/${enc(sessionId)}/messages/send-${kind}`, { form }),
    get: (sessionId: string, messageId: string) =>
      request<Message>("GET", `/sessions/${enc(sessionId)}/messages/${enc(messageId)}`),
    page: (sessionId: string, page: number, limit: number, query?: Query) =>
      listPage<Message>(`/sessions/${enc(sessionId)}/messages`, page, limit, query)
  },

  webhooks: {
    listGlobal: () => listAll<Webhook>("/webhooks"),
    listForSession: (sessionId: string) => listAll<Webhook>(`/sessions/${enc(sessionId)}/webhooks`),
    create: (sessionId: string | null, body: WebhookInput) =>
      request<CreatedWebhook>("POST", sessionId === null ? "/webhooks" : `/sessions/${enc(sessionId)}/webhooks`, { json: body }),
    update: (id: string, body: WebhookInput) => request<Webhook>("PUT", `/webhooks/${enc(id)}`, { json: body }),
    remove: (id: string) => request<void>("DELETE", `/webhooks/${enc(id)}`),
    test: (id: string) => request<TestResult>("POST", `/webhooks/${enc(id)}/test`),
    deliveries: (id: string, page: number, limit: number) => listPage<Delivery>(`/webhooks/${enc(id)}/deliveries`, page, limit),
    redeliver: (deliveryId: string) => request<Delivery>("POST", `/webhooks/deliveries/${enc(deliveryId)}/redeliver`)
  },

  keys: {
    list: () => listAll<ApiKey>("/auth/api-keys"),
    create: (body: ApiKeyInput) => request<CreatedApiKey>("POST", "/auth/api-keys", { json: body }),
    revoke: (id: string) => request<ApiKey>("POST", `/auth/api-keys/${enc(id)}/revoke`),
    remove: (id: string) => request<void>("DELETE", `/auth/api-keys/${enc(id)}`)
  },

  audit: {
    page: (page: number, limit: number, query?: Query) => listPage<AuditRecord>("/audit", page, limit, query)
  }
}
