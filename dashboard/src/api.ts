/**
 * A typed client for the Switchboard REST API (its OpenAPI document: /api/docs). The API
 * lives on its own port: the gateway serves `config.json` (`{"apiPort": 2785}`) next to the
 * dashboard's files, and every call goes to that port on the host the page was loaded from,
 * with `X-API-Key`.
 */
import {
  ApiError, type ApiKey, type ApiKeyInput, type ArchiveChatRequest, type AuditRecord, type Call, type Chat,
  type CreatedApiKey, type CreatedWebhook, type CreateSessionRequest, type Delivery, type ErrorBody,
  type HistoryRequest, type HistoryRequested, type ListBody, type Me, type Message, type MuteChatRequest,
  type PageOf, type PairingCode, type PairingCodeRequest, type PinChatRequest, type Profile,
  type ProfileAboutRequest, type ProfileNameRequest, type ProxyView, type QrCode, type SendResult,
  type Session, type SessionSettings, type SetProxyRequest, type TestResult, type UpdateSessionSettingsRequest,
  type Webhook, type WebhookInput, type WebhookUpdate
} from "./model"
import type { SendRequest } from "./sendRequests"

export * from "./model"

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
  const body = await request<ListBody<T>>("GET", path, query === undefined ? {} : { query })
  return Array.isArray(body.data) ? body.data : (body.data as PageOf<T>).items
}

/** One page (page/limit sent: `{data: {items, pagination}}`). */
export const listPage = async <T>(path: string, page: number, limit: number, query?: Query): Promise<PageOf<T>> => {
  const body = await request<ListBody<T>>("GET", path, { query: { ...query, page, limit } })
  if (Array.isArray(body.data)) {
    const items = body.data as ReadonlyArray<T>
    return { items, pagination: { page: 1, limit: items.length, total: items.length, total_pages: 1 } }
  }
  return body.data as PageOf<T>
}

const enc = encodeURIComponent

const sessionPath = (sessionId: string) => `/sessions/${enc(sessionId)}`
const chatPath = (sessionId: string, chatId: string) => `${sessionPath(sessionId)}/chats/${enc(chatId)}`

const formOf = ({ fields, file }: { readonly fields: Readonly<Record<string, string>>; readonly file: File }) => {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) form.set(name, value)
  form.set("file", file, file.name)
  return form
}

export const api = {
  /** Checks a key before it is kept: `GET /api/sessions?limit=1`. */
  checkKey: (key: string) => request<unknown>("GET", "/sessions", { query: { limit: 1 }, key }),

  sessions: {
    list: () => listAll<Session>("/sessions"),
    get: (id: string) => request<Session>("GET", `/sessions/${enc(id)}`),
    create: (body: CreateSessionRequest) =>
      request<Session>("POST", "/sessions", { json: body }),
    action: (id: string, action: "start" | "stop" | "restart" | "logout") =>
      request<Session>("POST", `/sessions/${enc(id)}/${action}`),
    remove: (id: string) => request<void>("DELETE", `/sessions/${enc(id)}`),
    qr: (id: string) => request<QrCode>("GET", `/sessions/${enc(id)}/qr`),
    pairingCode: (id: string, phoneNumber: string) =>
      request<PairingCode>("POST", `/sessions/${enc(id)}/pairing-code`, { json: { phoneNumber } satisfies PairingCodeRequest }),
    me: (id: string) => request<Me>("GET", `/sessions/${enc(id)}/me`),
    getProxy: (id: string) => request<ProxyView | null>("GET", `/sessions/${enc(id)}/proxy`),
    setProxy: (id: string, url: SetProxyRequest["url"]) =>
      request<ProxyView | null>("PUT", `/sessions/${enc(id)}/proxy`, { json: { url } satisfies SetProxyRequest })
  },

  messages: {
    /** Any send: its JSON body, or a media file as multipart/form-data. */
    send: (sessionId: string, send: SendRequest) =>
      request<SendResult>("POST", `/sessions/${enc(sessionId)}/messages/${send.endpoint}`, "json" in send ? { json: send.json } : { form: formOf(send) }),
    get: (sessionId: string, messageId: string) =>
      request<Message>("GET", `/sessions/${enc(sessionId)}/messages/${enc(messageId)}`),
    page: (sessionId: string, page: number, limit: number, query?: Query) =>
      listPage<Message>(`/sessions/${enc(sessionId)}/messages`, page, limit, query)
  },

  chats: {
    /** Most recent activity first; filters `archived`, `unread`, `type`. */
    page: (sessionId: string, page: number, limit: number, query?: Query) =>
      listPage<Chat>(`${sessionPath(sessionId)}/chats`, page, limit, query),
    get: (sessionId: string, chatId: string) => request<Chat>("GET", chatPath(sessionId, chatId)),
    archive: (sessionId: string, chatId: string, archived: boolean) =>
      request<Chat>("POST", `${chatPath(sessionId, chatId)}/archive`, { json: { archived } satisfies ArchiveChatRequest }),
    pin: (sessionId: string, chatId: string, pinned: boolean) =>
      request<Chat>("POST", `${chatPath(sessionId, chatId)}/pin`, { json: { pinned } satisfies PinChatRequest }),
    mute: (sessionId: string, chatId: string, mute: MuteChatRequest) =>
      request<Chat>("POST", `${chatPath(sessionId, chatId)}/mute`, { json: mute }),
    markUnread: (sessionId: string, chatId: string) =>
      request<Chat>("POST", `${chatPath(sessionId, chatId)}/unread`, { json: {} }),
    remove: (sessionId: string, chatId: string) => request<void>("DELETE", chatPath(sessionId, chatId)),
    messages: (sessionId: string, chatId: string, page: number, limit: number) =>
      listPage<Message>(`${chatPath(sessionId, chatId)}/messages`, page, limit),
    /** Asks the phone for older messages; they arrive later, as `source: "history"`. */
    requestHistory: (sessionId: string, chatId: string, count: number) =>
      request<HistoryRequested>("POST", `${chatPath(sessionId, chatId)}/history`, { json: { count } satisfies HistoryRequest })
  },

  profile: {
    get: (sessionId: string) => request<Profile>("GET", `${sessionPath(sessionId)}/profile`),
    setName: (sessionId: string, name: string) =>
      request<unknown>("PUT", `${sessionPath(sessionId)}/profile/name`, { json: { name } satisfies ProfileNameRequest }),
    setAbout: (sessionId: string, about: string) =>
      request<unknown>("PUT", `${sessionPath(sessionId)}/profile/about`, { json: { about } satisfies ProfileAboutRequest }),
    /** Any image: the server crops and scales it to WhatsApp's 640×640 JPEG. */
    setPicture: (sessionId: string, file: File) =>
      request<unknown>("PUT", `${sessionPath(sessionId)}/profile/picture`, { form: formOf({ fields: {}, file }) }),
    removePicture: (sessionId: string) => request<unknown>("DELETE", `${sessionPath(sessionId)}/profile/picture`)
  },

  settings: {
    get: (sessionId: string) => request<SessionSettings>("GET", `${sessionPath(sessionId)}/settings`),
    update: (sessionId: string, changes: UpdateSessionSettingsRequest) =>
      request<SessionSettings>("PUT", `${sessionPath(sessionId)}/settings`, { json: changes })
  },

  calls: {
    page: (sessionId: string, page: number, limit: number) => listPage<Call>(`${sessionPath(sessionId)}/calls`, page, limit),
    reject: (sessionId: string, callId: string) => request<unknown>("POST", `${sessionPath(sessionId)}/calls/${enc(callId)}/reject`)
  },

  webhooks: {
    listGlobal: () => listAll<Webhook>("/webhooks"),
    listForSession: (sessionId: string) => listAll<Webhook>(`/sessions/${enc(sessionId)}/webhooks`),
    create: (sessionId: string | null, body: WebhookInput) =>
      request<CreatedWebhook>("POST", sessionId === null ? "/webhooks" : `/sessions/${enc(sessionId)}/webhooks`, { json: body }),
    update: (id: string, body: WebhookUpdate) => request<Webhook>("PUT", `/webhooks/${enc(id)}`, { json: body }),
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
