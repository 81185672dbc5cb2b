import type { HttpServerResponse } from "@effect/platform"
import { Option } from "effect"
import { type AuditRecord } from "../domain/Audit.js"
import { uuidv7 } from "../domain/uuidv7.js"
import type { AnsweredRequest } from "./RequestTracking.js"

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

/**
 * Whether the audit log keeps a request: every call that changes something (whatever its
 * outcome) and every request refused for who or where the caller is (401, 403).
 */
export const isAudited = (method: string, status: number) => !reads.has(method) || status === 401 || status === 403

/** Text as a database keeps it: Postgres refuses NUL in TEXT (a path may carry `%00`). */
const storable = (text: string) => text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text

/** The audit record of an answered request (see `requestEdge`, which writes it). */
export const auditRecordOf = (
  { caller, matched, method, now, tracked }: AnsweredRequest,
  response: HttpServerResponse.HttpServerResponse
): AuditRecord => ({
  id: uuidv7(now),
  at: new Date(now).toISOString(),
  requestId: tracked.requestId,
  keyId: Option.getOrNull(Option.map(caller, (principal) => principal.keyId)),
  keyName: Option.getOrNull(Option.map(caller, (principal) => principal.name)),
  clientIp: tracked.clientIp,
  method,
  action: Option.match(matched, {
    onNone: () => `${method} (no such route)`,
    onSome: ({ endpoint }) => `${endpoint.group}.${endpoint.name}`
  }),
  target: storable(tracked.pathname.slice(0, 512)),
  sessionId: Option.getOrNull(Option.flatMapNullable(matched, ({ params }) => params.sessionId === undefined ? undefined : storable(params.sessionId.slice(0, 200)))),
  outcome: outcomeOf(response.status),
  status: response.status,
  code: errorCodeOf(response)
})
