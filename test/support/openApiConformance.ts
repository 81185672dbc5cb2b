import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import type { ValidateFunction } from "ajv"

/**
 * Checks real answers against the gateway's OpenAPI document with a third-party validator
 * (ajv, JSON Schema 2020-12, which OpenAPI 3.1's schemas are): the status is declared, the
 * content type is, the body matches the declared schema, the declared headers are present and
 * well-formed. Every mismatch is kept, to be reported together.
 */

type Json = Record<string, any>

export interface Operation {
  readonly id: string
  readonly method: string
  /** The document's path (`/api/sessions/{sessionId}`). */
  readonly path: string
  readonly spec: Json
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  /** Parsed JSON when the answer says JSON; its bytes otherwise. */
  readonly body: unknown
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

export const operationsOf = (document: Json): ReadonlyArray<Operation> =>
  Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, spec]) => ({ id: spec.operationId as string, method: method.toUpperCase(), path, spec }))
  )

/** `/api/sessions/{sessionId}` matches `/api/sessions/abc`; the most literal path wins a tie. */
const pathPattern = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`)

/** A declared media type (its parameters aside: `text/plain; version=0.0.4`) covers the answer's. */
const mediaTypeMatches = (declared: string, actual: string) => {
  const essence = declared.split(";")[0]!.trim()
  if (essence === "*/*") return true
  const [type, subtype] = essence.split("/")
  const [actualType, actualSubtype] = actual.split("/")
  return type === actualType && (subtype === "*" || subtype === actualSubtype)
}

export const makeConformance = (document: Json) => {
  // The document's `#/components/...` references, resolved by ajv against one schema holding them.
  const text = JSON.stringify(document).replaceAll("\"#/components/schemas/", "\"components#/$defs/")
  const resolved = JSON.parse(text) as Json
  // Strict: an unknown keyword, a bad format or a duplicate `$id` makes the schema unusable.
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true })
  addFormats(ajv)
  ajv.addSchema({ $id: "components", $defs: resolved.components.schemas })
  const operations = operationsOf(resolved)
  const compiled = new Map<object, ValidateFunction>()
  const validatorOf = (schema: Json) => {
    let validate = compiled.get(schema)
    if (validate === undefined) compiled.set(schema, validate = ajv.compile(schema))
    return validate
  }
  // every schema compiled now, so that a document strict validators cannot build fails at once
  for (const operation of operations) {
    for (const response of Object.values(operation.spec.responses as Json)) {
      for (const media of Object.values((response.content ?? {}) as Json)) validatorOf(media.schema)
    }
  }
  const headerOf = (header: Json): Json => header.$ref === undefined ? header : resolved.components.headers[header.$ref.split("/").pop()]

  /** Each operation's statuses seen. */
  const exercised = new Map<string, Set<number>>()
  const mismatches: Array<string> = []

  /** The operation a request went to, as the router would pick it. */
  const operationFor = (method: string, pathname: string) => {
    const candidates = operations.filter((operation) => operation.method === method && pathPattern(operation.path).test(pathname))
    return candidates.sort((a, b) => b.path.replace(/\{[^}]+\}/g, "").length - a.path.replace(/\{[^}]+\}/g, "").length)[0]
  }

  const check = (method: string, pathname: string, answer: Answer): Operation => {
    const operation = operationFor(method, pathname)
    if (operation === undefined) throw new Error(`no operation of the document takes ${method} ${pathname}`)
    exercised.set(operation.id, (exercised.get(operation.id) ?? new Set()).add(answer.status))
    const where = `${operation.id} (${method} ${pathname}) ${answer.status}`
    const response = operation.spec.responses[String(answer.status)] as Json | undefined
    if (response === undefined) {
      mismatches.push(`${where}: status not declared (body ${JSON.stringify(answer.body)})`)
      return operation
    }
    for (const [name, declared] of Object.entries((response.headers ?? {}) as Json)) {
      const header = headerOf(declared)
      const value = answer.headers.get(name)
      if (value === null) {
        if (header.required === true) mismatches.push(`${where}: required header ${name} missing`)
        continue
      }
      const typed = header.schema?.type === "integer" ? Number(value) : value
      const validate = validatorOf(header.schema)
      if (!validate(typed)) mismatches.push(`${where}: header ${name}: ${value} ${ajv.errorsText(validate.errors)}`)
    }
    const content = response.content as Json | undefined
    const contentType = (answer.headers.get("content-type") ?? "").split(";")[0]!.trim()
    if (content === undefined) {
      if (answer.status !== 204 && contentType !== "") mismatches.push(`${where}: declares no content, answered ${contentType}`)
      return operation
    }
    const media = Object.keys(content).find((declared) => mediaTypeMatches(declared, contentType))
    if (media === undefined) {
      mismatches.push(`${where}: content type ${contentType} not declared (${Object.keys(content).join(", ")})`)
      return operation
    }
    if (media === "application/json" || media.endsWith("+json")) {
      const validate = validatorOf(content[media].schema)
      if (!validate(answer.body)) {
        mismatches.push(`${where}: body does not match: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(answer.body).slice(0, 300)}`)
      }
    }
    return operation
  }

  return { operations, check, exercised, mismatches }
}
