import { HttpIncomingMessage, HttpMethod, HttpServerError, HttpServerRequest, HttpServerResponse, Multipart } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, FiberRef, Option, Stream } from "effect"
import type { IncomingMessage } from "node:http"
import { toErrorBody } from "../domain/Errors.js"
import { boundaryOf, isClosed, isTooDeep, MAX_JSON_DEPTH } from "./bodyGuards.js"
import { mediaJsonBodyLimit } from "./mediaRequest.js"
import { matchedEndpoint } from "./Endpoints.js"

/**
 * The endpoints that take media (`group.endpoint`) read their body themselves, under
 * MEDIA_MAX_BYTES (`mediaRequest.ts`): the media sends, image and video status updates, and
 * picture uploads.
 */
const readOwnMediaBody = new Set([
  "messages.sendImage",
  "messages.sendVideo",
  "messages.sendAudio",
  "messages.sendDocument",
  "status.postImage",
  "status.postVideo",
  "profile.setPicture",
  "groups.setPicture"
])

/**
 * The refusal of a body over `maxBytes`. The connection is closed after it: the rest of the
 * body is never read, so the connection could not carry another request anyway.
 */
const payloadTooLarge = (maxBytes: number, setting: string) =>
  HttpServerResponse.unsafeJson(
    toErrorBody(413, {
      code: "PAYLOAD_TOO_LARGE",
      message: `the request body may be at most ${maxBytes} bytes (${setting})`,
      details: { maxBytes }
    }),
    { status: 413, headers: { connection: "close" } }
  )

const unreadable = HttpServerResponse.unsafeJson(
  toErrorBody(400, { code: "VALIDATION_FAILED", message: "the request body could not be read" }),
  { status: 400, headers: { connection: "close" } }
)

/**
 * The body, or `undefined` as soon as it grows past `limit`. Reading then stops without
 * destroying the request (which would take the socket, and the 413, with it).
 */
const readUpTo = (request: HttpServerRequest.HttpServerRequest, source: IncomingMessage, limit: number) =>
  Effect.async<Buffer | undefined, HttpServerError.RequestError>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      source.off("data", onData).off("end", onEnd).off("error", onError)
    }
    function onData(chunk: Buffer) {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      stop()
      source.pause()
      resume(Effect.succeed(undefined))
    }
    function onEnd() {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks, size)))
    }
    function onError(cause: unknown) {
      stop()
      resume(Effect.fail(new HttpServerError.RequestError({ request, reason: "Decode", cause })))
    }
    source.on("data", onData).once("end", onEnd).once("error", onError)
    return Effect.sync(stop)
  })

/**
 * Serves the request's body from `body` (already read): its body accessors become the
 * request's own properties, which shadow the class's (the stream they would read is spent).
 * Everything else, and the Node response the server writes to, stays as it was.
 *
 * The request is changed in place rather than wrapped and provided anew: a provide copies the
 * request's whole context (~40 services) and wraps the rest of the request in an
 * acquire/release, and a wrapping Proxy trapped every property the platform read after it
 * (bench/README.md, fourteenth round: 25 Effect operations fewer a send-text; its CPU did not
 * change measurably).
 */
const serveBodyFrom = (request: HttpServerRequest.HttpServerRequest, body: Buffer): HttpServerRequest.HttpServerRequest => {
  // Most bodies are JSON, read straight from the buffer; a web Request to replay the body as a
  // stream (multipart, forms) is made only when something asks for one.
  let replayed: HttpServerRequest.HttpServerRequest | undefined
  const replay = () =>
    (replayed ??= HttpServerRequest.fromWeb(new Request("http://gateway/", { method: "POST", body })).modify({ headers: request.headers }))
  const decodeError = (cause: unknown, description?: string) =>
    new HttpServerError.RequestError({ request, reason: "Decode", cause, ...(description === undefined ? {} : { description }) })
  // as Node's reader does: an empty body is `null` to the schema, not malformed JSON
  const json = body.length === 0 ? Effect.succeed(null) : Effect.try({
    try: (): unknown => JSON.parse(body.toString("utf8")),
    catch: (cause) => decodeError(cause)
  }).pipe(Effect.filterOrFail((value) => !isTooDeep(value), () => decodeError(undefined, `the JSON body nests more than ${MAX_JSON_DEPTH} levels deep`)))
  const text = Effect.sync(() => body.toString("utf8"))
  const arrayBuffer = Effect.sync(() => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer)
  // the parser would wait forever for the rest of a truncated multipart body (bodyGuards.ts)
  const boundary = boundaryOf(request.headers["content-type"])
  const truncated = boundary !== undefined && !isClosed(body, boundary)
  // Made only when asked for: an error captures a stack trace, ~2% of the CPU of every request
  // with a body when it was built for each one.
  const refusal = () => new Multipart.MultipartError({ reason: "Parse", cause: "the body ends before its closing boundary" })
  const served: Record<string, () => unknown> = {
    json: () => json,
    text: () => text,
    arrayBuffer: () => arrayBuffer,
    multipart: () => truncated ? Effect.fail(refusal()) : replay().multipart,
    multipartStream: () => truncated ? Stream.fail(refusal()) : replay().multipartStream,
    stream: () => replay().stream,
    urlParamsBody: () => replay().urlParamsBody
  }
  for (const [key, get] of Object.entries(served)) Object.defineProperty(request, key, { get, configurable: true })
  const modify = request.modify
  Object.defineProperty(request, "modify", {
    value: (options: Parameters<typeof modify>[0]) => serveBodyFrom(modify.call(request, options), body),
    configurable: true
  })
  return request
}

/**
 * Caps every request body at `bodyMaxBytes` (a bulk send, which may carry media, at what one
 * JSON media send takes). A declared `Content-Length` over the cap is refused before anything
 * is read; any other body is read up to the cap, and the handler gets it from memory. The
 * media sends enforce MEDIA_MAX_BYTES themselves; `MaxBodySize` bounds whatever else reads.
 * Wraps every route (Server.ts), so it knows the endpoint the router matched and runs before
 * authentication; a request no route takes has its body left unread.
 */
export const limitBodies = (bodyMaxBytes: number, mediaMaxBytes: number) =>
<E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.gen(function*() {
    const matched = Option.getOrUndefined(yield* FiberRef.get(matchedEndpoint))
    const endpoint = matched === undefined ? undefined : `${matched.endpoint.group}.${matched.endpoint.name}`
    const mediaSend = endpoint !== undefined && readOwnMediaBody.has(endpoint)
    const bulk = endpoint === "messages.sendBulk"
    const limit = mediaSend || bulk ? mediaJsonBodyLimit(mediaMaxBytes) : bodyMaxBytes
    const request = yield* HttpServerRequest.HttpServerRequest
    if (mediaSend || !HttpMethod.hasBody(request.method)) return yield* HttpIncomingMessage.withMaxBodySize(app, Option.some(limit))
    const setting = bulk ? "MEDIA_MAX_BYTES" : "BODY_MAX_BYTES"
    if (Number(request.headers["content-length"] ?? 0) > limit) return payloadTooLarge(limit, setting)
    const body = yield* readUpTo(request, NodeHttpServerRequest.toIncomingMessage(request), limit).pipe(Effect.either)
    // the client went away mid-body: no one will read the answer
    if (Either.isLeft(body)) return unreadable
    if (body.right === undefined) return payloadTooLarge(limit, setting)
    // Read already, within the cap: the handler reads it from memory, so it needs no `MaxBodySize`.
    serveBodyFrom(request, body.right)
    return yield* app
  })
