import { type CloseReason, EngineError } from "../../Engine.js"
import { DeadSocket } from "./deadSocket.js"
import { ServerIdentityInvalid } from "./serverIdentity.js"

/**
 * What a Baileys `connection.update` close means for the session. Baileys reports the cause
 * as a Boom error whose `output.statusCode` mirrors WhatsApp's stream error codes
 * (`DisconnectReason`); the actor then retries, restarts, wipes credentials or stops.
 */

export interface BaileysClose {
  /** `lastDisconnect.error.output.statusCode`; undefined when Baileys gave none. */
  readonly statusCode: number | undefined
  /** Whether the account had been linked (pair-success seen, see `isLinked`) when the socket closed. */
  readonly linked: boolean
  /**
   * Whether this socket showed a QR. Baileys closes with 408 both when the QR refs run out
   * and on any network error (ECONNREFUSED, ENOTFOUND, timeouts): only the first is QR_EXPIRED.
   */
  readonly qrShown: boolean
  /** The close came from the websocket failing (Baileys' "WebSocket Error (…)"), not from WhatsApp. */
  readonly networkError: boolean
  /** Baileys' description of the close, for `lastError`; never contains credentials. */
  readonly message: string | undefined
  /** The server failed the identity check in the handshake (./serverIdentity.ts): it is not WhatsApp's. */
  readonly serverIdentityInvalid?: boolean
}

/** The status code of a Baileys close error (a Boom: `error.output.statusCode`). */
export const statusCodeOf = (error: unknown): number | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const output = (error as { readonly output?: { readonly statusCode?: unknown } }).output
  return typeof output?.statusCode === "number" ? output.statusCode : undefined
}

export const closeMessageOf = (error: unknown): string | undefined =>
  error instanceof Error && error.message !== "" ? error.message : undefined

/**
 * Baileys wraps websocket failures as `Boom("WebSocket Error (…)", { data: <the ws error> })`;
 * a socket our watchdog cut for its silence (`DeadSocket`) is one too.
 */
export const isNetworkError = (error: unknown): boolean => {
  if (error instanceof DeadSocket) return true
  const data = (error as { readonly data?: { readonly code?: unknown } } | null | undefined)?.data
  return (typeof data?.code === "string" && data.code.startsWith("E")) || /^WebSocket Error/.test(closeMessageOf(error) ?? "")
}

/** Everything `closeReasonOf` needs, read off a `connection.update` close. */
export const baileysCloseOf = (error: unknown, linked: boolean, qrShown: boolean): BaileysClose => ({
  statusCode: statusCodeOf(error),
  linked,
  qrShown,
  networkError: isNetworkError(error),
  message: closeMessageOf(error),
  serverIdentityInvalid: error instanceof ServerIdentityInvalid
})

/** Codes on which reconnecting is pointless or harmful, with the code the API reports. */
const terminal: Record<number, {
  readonly kind: "logged_out" | "fatal"
  readonly code: string
  readonly why: string
  /** The why replaces Baileys' own message, which says nothing an operator can act on. */
  readonly oursToTell?: true
}> = {
  401: { kind: "logged_out", code: "LOGGED_OUT", why: "the device was unlinked" },
  403: { kind: "fatal", code: "FORBIDDEN", why: "WhatsApp refused the account" },
  // `<failure reason="405">`: the server refuses this WhatsApp Web version; every retry would too.
  405: {
    kind: "fatal",
    code: "CLIENT_OUTDATED",
    why: "WhatsApp refused this client's WhatsApp Web version as outdated: set WA_VERSION to the current one (e.g. 2.3000.1029000000, as web.whatsapp.com shows it) and start the session again",
    oursToTell: true
  },
  411: { kind: "fatal", code: "MULTIDEVICE_MISMATCH", why: "the account does not support multi-device" },
  // Another socket uses the same credentials: reconnecting would make the two fight forever.
  440: { kind: "fatal", code: "CONNECTION_REPLACED", why: "another connection took over this session" }
}

/** Transient codes: the actor reconnects on its backoff schedule, naming the cause. */
const transient: Record<number, string> = {
  408: "CONNECTION_LOST",
  428: "CONNECTION_CLOSED",
  500: "BAD_SESSION",
  503: "SERVICE_UNAVAILABLE"
}

export const closeReasonOf = ({ linked, message, networkError, qrShown, serverIdentityInvalid, statusCode }: BaileysClose): CloseReason => {
  const detail = (fallback: string) => `baileys: ${message ?? fallback}${statusCode === undefined ? "" : ` (${statusCode})`}`
  // Whoever answered is not WhatsApp: trying again would only talk to it again.
  if (serverIdentityInvalid) return { kind: "fatal", code: "SERVER_IDENTITY_INVALID", message: detail("the server is not WhatsApp's") }
  if (statusCode !== undefined) {
    const stop = terminal[statusCode]
    if (stop !== undefined) {
      return { kind: stop.kind, code: stop.code, message: stop.oursToTell ? `baileys: ${stop.why} (${statusCode})` : detail(stop.why) }
    }
    // WhatsApp asks for a fresh socket, always right after pairing: reconnect at once.
    if (statusCode === 515) return { kind: "restart", code: "RESTART_REQUIRED", message: detail("restart required") }
    // Before linking, a 408 while QRs were up means every QR ref was used without a scan.
    if (statusCode === 408 && !linked && qrShown && !networkError) {
      return { kind: "fatal", code: "QR_EXPIRED", message: detail("no device linked before the QR codes ran out") }
    }
  }
  const code = statusCode === undefined
    ? "CONNECTION_ENDED"
    : transient[statusCode] ?? `DISCONNECTED_${statusCode}`
  return { kind: "retry", code, message: detail("the connection closed") }
}

/** Codes after which trying the same operation again later may succeed. */
const transientCodes = new Set([408, 428, 500, 503, 515])

/**
 * An error thrown by a Baileys operation (send, pairing code, receipts, logout) as an
 * `EngineError`. Baileys throws Booms: connection-level codes are transient, the rest
 * (bad input, refused by the server) are not; an error without a code is presumed transient
 * only if it reads like a dropped connection or a timeout.
 */
export const engineErrorOf = (operation: string, error: unknown): EngineError => {
  const statusCode = statusCodeOf(error)
  const text = error instanceof Error ? error.message : String(error)
  const transient = statusCode !== undefined
    ? transientCodes.has(statusCode)
    : /connection (closed|lost)|timed? ?out|socket/i.test(text)
  return new EngineError({
    code: statusCode === undefined ? `${operation}_FAILED` : `${operation}_FAILED_${statusCode}`,
    message: `baileys: ${text}`,
    transient
  })
}

/**
 * The error WhatsApp put on an `<iq type=error>`: Baileys throws it as a Boom whose `data` is
 * the numeric code and whose message is the text (`404 item-not-found`, `403 forbidden`,
 * `401 not-authorized`, `409 conflict`, `410 gone`…). Undefined for anything else.
 */
export const iqErrorOf = (error: unknown): { readonly code: number; readonly text: string } | undefined => {
  if (!(error instanceof Error)) return undefined
  const data = (error as { readonly data?: unknown }).data
  if (typeof data === "number") return { code: data, text: error.message }
  // `extractGroupMetadata` throws the error node's code as the Boom's status
  const node = data as { readonly tag?: unknown; readonly attrs?: { readonly code?: unknown } } | undefined
  if (node?.tag === "error" && typeof node.attrs?.code === "string") return { code: Number(node.attrs.code), text: error.message }
  return undefined
}

/** An iq refused by WhatsApp that no refusal covers: transient only for server-side trouble. */
export const iqFailureOf = (operation: string, error: unknown): EngineError => {
  const iq = iqErrorOf(error)
  if (iq === undefined) return engineErrorOf(operation, error)
  return new EngineError({
    code: `${operation}_FAILED_${iq.code}`,
    message: `baileys: WhatsApp answered ${iq.code} ${iq.text}`,
    transient: iq.code >= 500 || iq.code === 408 || iq.code === 429
  })
}
