import { HttpServerRequest, type HttpApp, type HttpServerResponse } from "@effect/platform"
import { Clock, Effect, FiberRef, Option } from "effect"
import { Audit } from "../services/Audit.js"
import { type AuditRecord } from "../domain/Audit.js"
import type { Principal } from "../domain/Principal.js"
import { uuidv7 } from "../domain/uuidv7.js"
import { matchedEndpoint, type MatchedEndpoint } from "./Endpoints.js"
import { authenticatedCaller, CurrentRequest, type TrackedRequest } from "./RequestTracking.js"

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

interface Answered {
  readonly method: string
  readonly tracked: TrackedRequest
  readonly matched: Option.Option<MatchedEndpoint>
  readonly caller: Option.Option<Principal>
}

/** `now`: when the answer went out, in epoch millis. */
const recordOf = (
  { caller, matched, method, tracked }: Answered,
  response: HttpServerResponse.HttpServerResponse,
  now: number
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
  target: tracked.pathname.slice(0, 512),
  sessionId: Option.getOrNull(Option.flatMapNullable(matched, ({ params }) => params.sessionId?.slice(0, 200))),
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
    const { method } = yield* HttpServerRequest.HttpServerRequest
    if (!reads.has(method) || response.status === 401 || response.status === 403) {
      const answered: Answered = {
        method,
        tracked: yield* CurrentRequest,
        matched: yield* FiberRef.get(matchedEndpoint),
        caller: yield* FiberRef.get(authenticatedCaller)
      }
      yield* (yield* Audit).record(recordOf(answered, response, yield* Clock.currentTimeMillis))
    }
    return response
  })
