import { Schema } from "effect"

/**
 * Every error the gateway reports is one of these classes, one per HTTP status. The `code`
 * says what went wrong (`SESSION_NOT_FOUND`, `SESSION_NOT_READY`, …); the class says how bad.
 * Each class lists the codes it is raised with (`codes`), engines' refusals included: the
 * OpenAPI document declares them as the enum of its `code`, so clients can branch on them.
 * Services fail with them, so library users and the HTTP layer see the same typed errors.
 * On the wire they take the shape of `ErrorBody` below: `{statusCode, error, code, message, details?}`.
 */
const fields = {
  code: Schema.String,
  message: Schema.String,
  details: Schema.optional(Schema.Unknown)
}

export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", fields) {
  static readonly status = 400
  static readonly codes = [
    "VALIDATION_FAILED",
    "INVALID_PICTURE",
    "NOT_A_POLL",
    "TOO_MANY_POLL_OPTIONS",
    "UNKNOWN_POLL_OPTION",
    "DUPLICATE_POLL_OPTION",
    "BATCH_TOO_LARGE",
    "MEDIA_URL_NOT_ALLOWED",
    "MEDIA_FETCH_FAILED",
    "MEDIA_FETCH_TIMEOUT",
    "PROFILE_NAME_INVALID",
    "NOT_A_PERSON",
    "NOT_EDITABLE",
    "NO_HISTORY_ANCHOR",
    "STATUS_AUDIENCE_REQUIRED",
    "INVALID_GROUP_REQUEST",
    "WEBHOOK_URL_NOT_ALLOWED",
    "WEBHOOK_URL_UNRESOLVABLE"
  ] as const
}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", fields) {
  static readonly status = 401
  static readonly codes = ["UNAUTHORIZED"] as const
}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {
  static readonly status = 403
  static readonly codes = [
    "FORBIDDEN",
    "IP_NOT_ALLOWED",
    "NOT_OWN_STATUS",
    "NOT_GROUP_ADMIN",
    "NOT_GROUP_MEMBER",
    "NOT_CHANNEL_OWNER",
    "NOT_CHANNEL_ADMIN",
    "NOT_CHANNEL_FOLLOWER",
    "NOT_MESSAGE_WRITER",
    "GROUP_JOIN_FORBIDDEN"
  ] as const
}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields) {
  static readonly status = 404
  static readonly codes = [
    "SESSION_NOT_FOUND",
    "MESSAGE_NOT_FOUND",
    "CHAT_NOT_FOUND",
    "BATCH_NOT_FOUND",
    "MEDIA_NOT_FOUND",
    "API_KEY_NOT_FOUND",
    "WEBHOOK_NOT_FOUND",
    "DELIVERY_NOT_FOUND",
    "GROUP_NOT_FOUND",
    "CHANNEL_NOT_FOUND",
    "CONTACT_NOT_FOUND",
    "LABEL_NOT_FOUND",
    "CALL_NOT_FOUND",
    "STATUS_NOT_FOUND",
    "POLL_NOT_FOUND",
    "PICTURE_NOT_FOUND",
    "PICTURE_GONE",
    "INVITE_NOT_FOUND",
    "NOT_ON_WHATSAPP",
    "PRESENCE_UNKNOWN",
    "NOT_SANDBOX"
  ] as const
}
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields) {
  static readonly status = 409
  static readonly codes = [
    "SESSION_NOT_READY",
    "SESSION_NAME_TAKEN",
    "LAST_ADMIN_KEY",
    "EDIT_NOT_ALLOWED",
    "FORWARD_NOT_ALLOWED",
    "PIN_NOT_ALLOWED",
    "REVOKE_NOT_ALLOWED",
    "STAR_NOT_ALLOWED",
    "VOTE_NOT_ALLOWED",
    "NOT_EDITABLE",
    "MESSAGE_REVOKED",
    "CALL_NOT_RINGING",
    "CONTACT_BLOCKED",
    "NO_STATUS_AUDIENCE",
    "NOT_A_BUSINESS_ACCOUNT",
    "JOIN_REQUEST_PENDING",
    "GROUP_CONFLICT",
    "PUSH_NAME_UNKNOWN",
    "POLL_SECRET_MISSING",
    "NOT_LOGGED_IN",
    "APP_STATE_NOT_READY"
  ] as const
}
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {
  static readonly status = 413
  static readonly codes = ["PAYLOAD_TOO_LARGE"] as const
}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", fields) {
  static readonly status = 415
  static readonly codes = ["UNSUPPORTED_MEDIA_TYPE"] as const
}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", fields) {
  static readonly status = 429
  static readonly codes = ["RATE_LIMITED", "SESSION_BACKLOG_FULL"] as const
}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {
  static readonly status = 500
  static readonly codes = ["INTERNAL_ERROR"] as const
}
export class NotSupported extends Schema.TaggedError<NotSupported>()("NotSupported", fields) {
  static readonly status = 501
  static readonly codes = ["UNSUPPORTED_CHAT"] as const
}
export class EngineFailure extends Schema.TaggedError<EngineFailure>()("EngineFailure", fields) {
  static readonly status = 502
  static readonly codes = ["ENGINE_ERROR"] as const
}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields) {
  static readonly status = 503
  static readonly codes = ["SERVICE_UNAVAILABLE", "MEDIA_STORE_UNAVAILABLE"] as const
}
export class EngineTimeout extends Schema.TaggedError<EngineTimeout>()("EngineTimeout", fields) {
  static readonly status = 504
  static readonly codes = ["ENGINE_TIMEOUT"] as const
}

/**
 * The Store (the database) could not be reached, or refused a statement. Every change and the
 * events announcing it are one transaction, so nothing was half done: the caller may try again.
 * Repositories fail with it; the HTTP layer answers it as 503 SERVICE_UNAVAILABLE.
 */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  message: Schema.String
}) {}

/** A session of that name exists already: names are unique, like ids. */
export class SessionNameTaken extends Schema.TaggedError<SessionNameTaken>()("SessionNameTaken", {
  name: Schema.String
}) {}

export type ApiError =
  | ValidationFailed
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | PayloadTooLarge
  | UnsupportedMediaType
  | RateLimited
  | InternalError
  | NotSupported
  | EngineFailure
  | ServiceUnavailable
  | EngineTimeout

const reasonPhrases: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout"
}

/** The body of every error response, as the OpenAPI document (/api/docs) describes it. */
export const ErrorBody = Schema.Struct({
  statusCode: Schema.Number,
  error: Schema.String,
  code: Schema.String,
  message: Schema.String,
  // any JSON value, declared as such: `unknown`'s own declaration is an `$id` every use shares
  details: Schema.optional(Schema.Unknown.annotations({ jsonSchema: { type: ["object", "array", "string", "number", "boolean", "null"] } }))
}).annotations({ identifier: "Error" })

/** The wire body of an error with the given HTTP status. */
export const toErrorBody = (status: number, error: { readonly code: string; readonly message: string; readonly details?: unknown }): typeof ErrorBody.Type => ({
  statusCode: status,
  error: reasonPhrases[status] ?? "Error",
  code: error.code,
  message: error.message,
  ...(error.details === undefined ? {} : { details: error.details })
})

export const sessionNotFound = (sessionId: string) =>
  new NotFound({ code: "SESSION_NOT_FOUND", message: `Session ${sessionId} does not exist` })
export const messageNotFound = (messageId: string) =>
  new NotFound({ code: "MESSAGE_NOT_FOUND", message: `Message ${messageId} does not exist` })
export const chatNotFound = (chatId: string) =>
  new NotFound({ code: "CHAT_NOT_FOUND", message: `Chat ${chatId} is not in this session's chat list` })

/** What an engine call made through a session can fail with, as the API answers it. */
export type EngineCallError = Conflict | EngineFailure | NotFound | Forbidden | NotSupported | ValidationFailed

const refusalClasses = {
  not_found: NotFound,
  forbidden: Forbidden,
  conflict: Conflict,
  not_supported: NotSupported,
  invalid: ValidationFailed
} as const

/**
 * An engine's failure as the API answers it: a refusal keeps the engine's code with its status
 * (GROUP_NOT_FOUND 404, NOT_GROUP_ADMIN 403, NOT_A_BUSINESS_ACCOUNT 409…); anything else is a
 * 502 ENGINE_ERROR carrying the engine's code in `details`.
 */
export const toApiError = (error: {
  readonly code: string
  readonly message: string
  readonly refusal?: keyof typeof refusalClasses | undefined
}): EngineCallError =>
  error.refusal === undefined
    ? new EngineFailure({ code: "ENGINE_ERROR", message: error.message, details: { engineCode: error.code } })
    : new refusalClasses[error.refusal]({ code: error.code, message: error.message })
