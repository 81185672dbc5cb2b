/**
 * What the OpenAPI document says that `OpenApi.fromApi` cannot say from the contract alone:
 * the headers every answer carries, the statuses that only some operations can answer although
 * the contract declares their errors API-wide, and the content types of the operations that do
 * not answer JSON. `completeDocument` is the API's own `OpenApi.Transform` (./Api.ts); the
 * others are transforms of single operations, beside their endpoints.
 */

type Json = Record<string, any>

const errorRef = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/** The headers the document names, declared once (`components.headers`) and referred to. */
const headers: Json = {
  "X-Request-Id": {
    description: "The request's id: the caller's own X-Request-Id when short and plain, else a new one. Log lines of the request carry it.",
    required: true,
    schema: { type: "string" }
  },
  "RateLimit-Limit": {
    description: "Requests a minute the caller may make (its key's limit, or RATE_LIMIT_PER_MINUTE). Absent when no limit applies.",
    schema: { type: "integer", minimum: 1 }
  },
  "RateLimit-Remaining": {
    description: "Requests left in the current minute. Absent when no limit applies.",
    schema: { type: "integer", minimum: 0 }
  },
  "RateLimit-Reset": {
    description: "Seconds until the minute's count starts again. Absent when no limit applies.",
    schema: { type: "integer", minimum: 1 }
  },
  "Retry-After": {
    description: "Seconds to wait before trying again.",
    schema: { type: "integer", minimum: 1 }
  }
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })

const rateLimitHeaders = {
  "RateLimit-Limit": headerRef("RateLimit-Limit"),
  "RateLimit-Remaining": headerRef("RateLimit-Remaining"),
  "RateLimit-Reset": headerRef("RateLimit-Reset")
}

const methods = ["get", "put", "post", "delete", "patch", "head", "options"] as const

/** The methods whose requests carry a body, which BODY_MAX_BYTES caps (`BodyLimit.ts`): all but GET, HEAD and OPTIONS. */
const takesBody = (method: string) => method !== "get" && method !== "head" && method !== "options"

/**
 * One operation, completed by what it is:
 * - 400 is the API.md error shape only (`ErrorResponses` answers schema mismatches so, never
 *   with HttpApi's own `HttpApiDecodeError`);
 * - 413 only where a body is read (the contract declares it API-wide, for the typed client);
 * - an authenticated operation may be rate limited: 429 with `Retry-After`, and the
 *   `RateLimit-*` headers on every answer when a limit applies;
 * - every answer carries `X-Request-Id`; a 503 may carry `Retry-After` (declared optional: the
 *   drain and a Store outage do not know when they end).
 */
const completeOperation = (method: string, operation: Json): Json => {
  const authenticated = Array.isArray(operation.security) && operation.security.length > 0
  const responses: Json = { ...operation.responses }
  responses["400"] = {
    description: "The request did not match the schema (VALIDATION_FAILED), or an engine refused its values.",
    content: { "application/json": { schema: errorRef("ValidationFailed") } }
  }
  if (!takesBody(method)) delete responses["413"]
  if (authenticated && responses["429"] === undefined) {
    responses["429"] = {
      description: "RATE_LIMITED: the caller's rate limit is spent.",
      content: { "application/json": { schema: errorRef("RateLimited") } }
    }
  }
  for (const [status, response] of Object.entries(responses)) {
    const own: Json = response.headers ?? {}
    const declared: Json = { "X-Request-Id": headerRef("X-Request-Id") }
    if (authenticated) Object.assign(declared, rateLimitHeaders)
    if (status === "429") declared["Retry-After"] = { ...headers["Retry-After"], required: true }
    if (status === "503") declared["Retry-After"] = headerRef("Retry-After")
    // an operation's own declaration (the backlog's Retry-After) says more, and keeps what this one requires
    for (const [name, header] of Object.entries(own)) {
      declared[name] = declared[name]?.$ref === undefined ? { ...declared[name], ...header } : header
    }
    responses[status] = { ...response, headers: declared }
  }
  return { ...operation, responses }
}

/**
 * The API's `OpenApi.Transform`: every operation completed (`completeOperation`), the shared
 * headers declared, and HttpApi's `HttpApiDecodeError`, which no answer takes, left out.
 */
export const completeDocument = (document: Json): Json => {
  const paths: Json = {}
  for (const [path, item] of Object.entries(document.paths as Json)) {
    paths[path] = { ...item }
    for (const method of methods) {
      if (item[method] !== undefined) paths[path][method] = completeOperation(method, item[method])
    }
  }
  const { HttpApiDecodeError: _unused, ...schemas } = document.components.schemas
  return { ...document, paths, components: { ...document.components, schemas, headers } }
}

/** A success answered in another content type than JSON; `*∕*` for bytes of any type. */
const bytes = (contentType: string) => ({
  [contentType]: { schema: contentType.includes("*") ? {} : { type: "string", contentMediaType: contentType } }
})

/**
 * An operation's `OpenApi.Transform`: its `status` answers `alternative` (bytes of that type)
 * besides JSON. HttpApi puts every success of a status under one content type, the first's.
 */
export const answersAlso = (status: number, alternative: string) => (operation: Json): Json => {
  const response = operation.responses[status]
  const union = response.content["application/json"].schema
  // the JSON member of the union HttpApi made of the two successes; the other is the bytes
  const json = Array.isArray(union.anyOf) ? union.anyOf.find((member: Json) => member.format !== "binary") : union
  return {
    ...operation,
    responses: { ...operation.responses, [status]: { ...response, content: { "application/json": { schema: json }, ...bytes(alternative) } } }
  }
}

/** An operation's `OpenApi.Transform`: its `status` answers bytes of whatever type they are (stored media). */
export const answersBytes = (status: number) => (operation: Json): Json => ({
  ...operation,
  responses: { ...operation.responses, [status]: { ...operation.responses[status], content: bytes("*/*") } }
})

/** An operation's `OpenApi.Transform`: a request header the handler reads itself. */
export const readsHeader = (name: string, description: string) => (operation: Json): Json => ({
  ...operation,
  parameters: [...(operation.parameters ?? []), { name, in: "header", required: false, description, schema: { type: "string" } }]
})
