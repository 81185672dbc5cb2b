import type { HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Audit } from "../services/Audit.js"
import { type AuditRecord } from "../domain/Audit.js"
import { uuidv7 } from "../domain/uuidv7.js"
import { CurrentRequest, type RequestInfo } from "./RequestInfo.js"

const reads = new Set(["GET", "HEAD", "OPTIONS"])

const outcomeOf = (status: number): AuditRecord["outcome"] =>
  status < 400 ? "success" : status === 401 || status === 403 || status === 429 ? "denied" : "failure"

/** The `code` of an error answer (the API's error shape), read back from the encoded body. */
const errorCodeOf = (response: HttpServerResponse.HttpServerResponse): string | null => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return null
  try {
    const code = (JSON.parse(new TextDecoder().decode(response.body.body)) as { readonly code?: unknown }).code
    return typeof code === "string" ? code : null
  } catch {
    return null
  }
}

const recordOf = (info: RequestInfo, response: HttpServerResponse.HttpServerResponse): AuditRecord => ({
  id: uuidv7(),
  at: new Date().toISOString(),
  requestId: info.requestId,
  keyId: info.principal?.keyId ?? null,
  keyName: info.principal?.name ?? null,
  clientIp: info.clientIp,
  method: info.method,
  action: info.route === undefined ? `${info.method} (no such route)` : `${info.route.group}.${info.route.name}`,
  target: info.pathname.slice(0, 512),
  sessionId: info.params.sessionId?.slice(0, 200) ?? null,
  outcome: outcomeOf(response.status),
  status: response.status,
  code: errorCodeOf(response)
})

/**
 * The audit log's intake: every call that changes something (whatever its outcome) and every
 * request refused for who or where the caller is (401, 403). Written before the answer goes
 * out, so what a client was told happened is on record.
 */
export const auditRequests = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | CurrentRequest | Audit> =>
  Effect.gen(function*() {
    const response = yield* app
    const info = yield* CurrentRequest
    if (!reads.has(info.method) || response.status === 401 || response.status === 403) {
      yield* (yield* Audit).record(recordOf(info, response))
    }
    return response
  })
