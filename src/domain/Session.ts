import { Schema } from "effect"
import { phoneNumberPattern, SessionId } from "./Ids.js"

export const SessionStatus = Schema.Literal(
  "created",
  "initializing",
  "qr_ready",
  "authenticating",
  "ready",
  "disconnected",
  "stopped",
  "logged_out",
  "failed"
)
export type SessionStatus = typeof SessionStatus.Type

/** Statuses in which the session holds (or is building) an engine connection. */
export const runningStatuses: ReadonlySet<SessionStatus> = new Set([
  "initializing",
  "qr_ready",
  "authenticating",
  "ready",
  "disconnected"
])

/**
 * Sends are accepted (and queued) while the session is ready, or linked and on its way back:
 * disconnected, or connecting again with its credentials (after a restart, or on another
 * runner after a failover). A session that was never linked refuses them.
 */
export const acceptsSends = (status: SessionStatus, linked: boolean) =>
  status === "ready" || status === "disconnected" || (linked && (status === "initializing" || status === "authenticating"))

export const EngineName = Schema.Literal("sandbox", "baileys")
export type EngineName = typeof EngineName.Type

export const LastError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  at: Schema.String
})
export type LastError = typeof LastError.Type

/** A proxy URL as shown to callers: the password is never echoed back. */
export const ProxyView = Schema.Struct({ url: Schema.String })

export const ProxyUrl = Schema.String.pipe(
  Schema.filter((url) => {
    try {
      const parsed = new URL(url)
      return ["http:", "https:", "socks5:", "socks5h:"].includes(parsed.protocol) && parsed.hostname.length > 0
    } catch {
      return false
    }
  }, { message: () => "proxy url must be http://, https://, socks5:// or socks5h:// with a host" })
)

/**
 * The session's accepted sends that have not gone out yet (waiting for their turn at the
 * pacing, for the session to be ready, or going out), and the bound past which sends are
 * refused with 429 SESSION_BACKLOG_FULL (`OUTBOUND_BACKLOG_MAX`; null when there is none).
 */
export const OutboundBacklog = Schema.Struct({
  backlog: Schema.Number.annotations({ description: "accepted sends not gone out yet" }),
  max: Schema.NullOr(Schema.Number).annotations({ description: "OUTBOUND_BACKLOG_MAX; null: no bound" })
}).annotations({
  identifier: "OutboundBacklog",
  description: "In GET /api/sessions/{id} only. Past `max`, sends are refused with 429 SESSION_BACKLOG_FULL and Retry-After."
})
export type OutboundBacklog = typeof OutboundBacklog.Type

export class Session extends Schema.Class<Session>("Session")({
  id: SessionId,
  name: Schema.String,
  status: SessionStatus,
  engine: EngineName,
  phone: Schema.NullOr(Schema.String),
  pushName: Schema.NullOr(Schema.String),
  proxy: Schema.NullOr(ProxyView),
  lastError: Schema.NullOr(LastError),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  /** Only in the answer of GET /api/sessions/{id}: counting it for every session of a list would cost a read each. */
  outbound: Schema.optional(OutboundBacklog),
  /** Only in the answer of GET /api/sessions/{id}, with `outbound`: what its engine presents to WhatsApp. */
  waVersion: Schema.optional(Schema.NullOr(Schema.String).annotations({
    description: "the WhatsApp Web version the session presents (WA_VERSION, else Baileys' built-in one); null on the sandbox"
  }))
}) {}

export const SessionName = Schema.Trim.pipe(
  Schema.minLength(1, { message: () => "name must not be empty" }),
  Schema.maxLength(64, { message: () => "name must be at most 64 characters" }),
  Schema.pattern(/^[\w.\- ]+$/, { message: () => "name may hold letters, digits, spaces, '.', '_' and '-'" })
)

/** `PUT …/proxy`: a new proxy URL, or `null` to connect directly. Applied on the next connect. */
export const SetProxyRequest = Schema.Struct({ url: Schema.NullOr(ProxyUrl) })
export type SetProxyRequest = typeof SetProxyRequest.Type

export const CreateSessionRequest = Schema.Struct({
  name: SessionName,
  proxy: Schema.optional(Schema.NullOr(Schema.Struct({ url: ProxyUrl }))),
  autoStart: Schema.optional(Schema.Boolean)
})
export type CreateSessionRequest = typeof CreateSessionRequest.Type

export const QrCode = Schema.Struct({
  qr: Schema.String,
  image: Schema.String.annotations({ description: "data:image/png;base64,…" }),
  expiresAt: Schema.String
})
export type QrCode = typeof QrCode.Type

export const PairingCodeRequest = Schema.Struct({
  phoneNumber: Schema.String.pipe(Schema.pattern(phoneNumberPattern, { message: () => "phoneNumber must be 6–15 digits" }))
})
export const PairingCode = Schema.Struct({ code: Schema.String })

export const Me = Schema.Struct({
  id: Schema.String,
  phone: Schema.String,
  lid: Schema.NullOr(Schema.String),
  pushName: Schema.NullOr(Schema.String)
})
export type Me = typeof Me.Type

/** Redacts the password (and only the password) of a proxy URL. */
export const redactProxyUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = "***"
    return parsed.toString().replace(/\/$/, url.endsWith("/") ? "/" : "")
  } catch {
    return "***"
  }
}
