import { HttpApiBuilder, HttpApiError, HttpServerError, HttpServerResponse, Multipart } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { StoreUnavailable, toErrorBody } from "../domain/Errors.js"
import { ClusterUnreachable } from "../runtime/cluster/ClusterUnreachable.js"
import { CacheUnavailable } from "../runtime/ports/Cache.js"
import { announceRetryAfter } from "./backlogRefusal.js"

interface Refusal {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly details?: unknown
}

/**
 * Schema messages quote the rejected input ("Expected null, actual \"socks4://u:pw@…\""). A
 * refusal must never repeat what was sent: it may be a password, a key or a secret.
 */
const withoutInput = (message: string) => message.replace(/,?\s*actual\s[\s\S]*$/, "")

/** A message that already names its field (`page must be an integer, …`) is not prefixed with it again. */
const naming = (path: string, message: string) => path === "" || message.startsWith(`${path} `) ? message : `${path}: ${message}`

/** Schema issues as a 400's message and details (each issue's path and what was wrong with it). */
export const describeIssues = (issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>) => {
  const details = issues.map((issue) => ({ path: issue.path.join("."), message: withoutInput(issue.message) }))
  const message = details.map(({ message, path }) => naming(path, message)).join("; ")
  return { message, details }
}

/**
 * Writing a file part reports its stream's failure as an InternalError around it: on Node the
 * cause is the parser's own `ReachedLimit`, which is what says the file was too large.
 */
export const multipartReason = (error: Multipart.MultipartError): Multipart.MultipartError["reason"] => {
  const cause = error.cause as { readonly _tag?: unknown; readonly limit?: unknown } | null | undefined
  if (error.reason !== "InternalError" || typeof cause !== "object" || cause === null) return error.reason
  if (cause instanceof Multipart.MultipartError) return multipartReason(cause)
  if (cause._tag !== "ReachedLimit") return error.reason
  return cause.limit === "MaxPartSize" ? "FileTooLarge" : cause.limit === "MaxTotalSize" ? "BodyTooLarge" : error.reason
}

const refusalOf = (error: unknown): Refusal | undefined => {
  if (error instanceof HttpApiError.HttpApiDecodeError) {
    const { details, message } = describeIssues(error.issues)
    return { status: 400, code: "VALIDATION_FAILED", message: message || error.message, details }
  }
  // The Store (or the cache) is down: the caller may try again; nothing was half done, since
  // every change and its events are one transaction.
  if (error instanceof ClusterUnreachable) return { status: 503, code: "SERVICE_UNAVAILABLE", message: error.message }
  if (isOutage(error)) {
    return storeOutage
  }
  if (HttpServerError.isServerError(error)) {
    if (error._tag === "RouteNotFound") {
      return { status: 404, code: "ROUTE_NOT_FOUND", message: `no route for ${error.request.method} ${new URL(error.request.url, "http://x").pathname}` }
    }
    if (error._tag === "RequestError") {
      return { status: 400, code: "VALIDATION_FAILED", message: error.description ?? "the request body could not be read (malformed JSON?)" }
    }
  }
  // A multipart body sent to an endpoint that takes JSON is read before the schema refuses it.
  if (error instanceof Multipart.MultipartError) {
    const reason = multipartReason(error)
    if (reason === "BodyTooLarge" || reason === "FileTooLarge") {
      return { status: 413, code: "PAYLOAD_TOO_LARGE", message: "the request body is too large" }
    }
    return { status: 400, code: "VALIDATION_FAILED", message: `the multipart body could not be read (${reason})` }
  }
  return undefined
}

const isOutage = (error: unknown) => error instanceof StoreUnavailable || error instanceof CacheUnavailable

const storeOutage: Refusal = {
  status: 503,
  code: "SERVICE_UNAVAILABLE",
  message: "the database or cache cannot be reached right now; try again shortly"
}

/**
 * A handler whose Store was unavailable answers 503 `SERVICE_UNAVAILABLE`: the caller may try
 * again, as nothing was half done (every change and its events are one transaction).
 */
export const answeringStoreOutage = <Request, A, E, R>(handler: (request: Request) => Effect.Effect<A, E, R>) =>
(request: Request): Effect.Effect<A | HttpServerResponse.HttpServerResponse, Exclude<E, StoreUnavailable>, R> =>
  Effect.catchIf(
    handler(request),
    (error): error is Extract<E, StoreUnavailable> => error instanceof StoreUnavailable,
    () => Effect.succeed(respond(storeOutage))
  ) as Effect.Effect<A | HttpServerResponse.HttpServerResponse, Exclude<E, StoreUnavailable>, R>

const respond = (refusal: Refusal) => HttpServerResponse.unsafeJson(toErrorBody(refusal.status, refusal), { status: refusal.status })

/** The contract's own errors (classes with a status) pass through to be encoded by HttpApi. */
const isContractError = (error: unknown) =>
  typeof error === "object" && error !== null && "status" in (error.constructor as object) && "code" in error

/**
 * Failures that arise before or around a handler, which the contract's error schemas do not
 * cover: schema mismatches and unreadable bodies are 400 `VALIDATION_FAILED`, unknown routes
 * 404. Anything else unexpected is a bug: logged, and answered with a 500 that reveals nothing.
 */
export const ErrorResponses = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(app, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure) && isContractError(failure.value)) return Effect.zipRight(announceRetryAfter(failure.value), Effect.failCause(cause))
    // Some request errors (an unreadable body) arrive as defects; they are still the caller's fault.
    const refusal = refusalOf(Cause.squash(cause))
    if (refusal !== undefined) return Effect.succeed(respond(refusal))
    return Effect.as(
      Effect.logError("unhandled error in a request", cause),
      respond({ status: 500, code: "INTERNAL_ERROR", message: "an unexpected error occurred; it has been logged" })
    )
  })
)
