import { type FileSystem, HttpApiSchema, HttpIncomingMessage, type HttpServerRequest, Multipart, type Path } from "@effect/platform"
import { NodeHttpServerRequest, NodeMultipart } from "@effect/platform-node"
import { Chunk, Effect, Option, ParseResult, Schema, type Scope, Stream } from "effect"
import * as fs from "node:fs/promises"
import { PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "../domain/Errors.js"
import { ChatIdFromInput } from "../domain/Ids.js"
import { type MediaKind, type MediaSource, type SendMediaInput, SendMediaRequest, type TypingMs } from "../domain/Message.js"
import { PictureRequest } from "../domain/Profile.js"
import { describeIssues, multipartReason } from "./ErrorResponses.js"
import { boundaryOf, ClosingGuard, isTooDeep, MAX_JSON_DEPTH } from "./bodyGuards.js"

/**
 * The body of a media send (`send-image`, `send-video`, `send-audio`, `send-document`), as JSON
 * (`media: {url}` or `media: {data (base64), mimetype?, filename?}`) or as multipart/form-data
 * (a `file` part plus the same fields). Read here by hand rather than by the router: the body
 * may be tens of megabytes, and too much of it must be a 413, not an unreadable request.
 * Picture uploads (profile, groups) come the same two ways: `readPictureRequest`.
 */

/** The multipart form: a `file` part, and the other fields as text. */
const MediaForm = Schema.Struct({
  chatId: ChatIdFromInput,
  file: Multipart.SingleFileSchema,
  caption: SendMediaRequest.fields.caption,
  filename: SendMediaRequest.fields.filename,
  quotedMessageId: SendMediaRequest.fields.quotedMessageId,
  ptt: Schema.optional(Schema.Literal("true", "false")),
  typingMs: Schema.optional(Schema.Union(
    Schema.Literal("auto"),
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 30_000, { message: () => "typingMs must be 0 to 30000, or \"auto\"" }))
  ))
})

export const SendMediaForm = HttpApiSchema.Multipart(MediaForm)

/** What the contract documents for every media endpoint: either body. */
export const SendMediaPayload = Schema.Union(SendMediaRequest, SendMediaForm)

/** base64 is 4/3 of the bytes; the JSON around it gets a generous megabyte. */
export const mediaJsonBodyLimit = (maxBytes: number) => Math.ceil(maxBytes / 3) * 4 + 1024 * 1024

const tooLarge = (maxBytes: number) =>
  new PayloadTooLarge({ code: "PAYLOAD_TOO_LARGE", message: `media may be at most ${maxBytes} bytes (MEDIA_MAX_BYTES)` })

const invalid = (message: string, details?: unknown) =>
  new ValidationFailed({ code: "VALIDATION_FAILED", message, ...(details === undefined ? {} : { details }) })

/** Decode failures as a 400 `VALIDATION_FAILED`, without quoting the input (it may be a URL with a token). */
const decodeOrRefuse = <A, I>(schema: Schema.Schema<A, I>, input: unknown) =>
  Schema.decodeUnknown(schema, { errors: "all" })(input).pipe(
    Effect.mapError((error) => {
      const { details, message } = describeIssues(ParseResult.ArrayFormatter.formatErrorSync(error))
      return invalid(message, details)
    })
  )

/** The whole body, refused as soon as it grows past `limit` (nothing more is read). */
const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number, refusal: PayloadTooLarge) =>
  Effect.gen(function*() {
    const declared = Number(request.headers["content-length"] ?? Number.NaN)
    if (declared > limit) return yield* refusal
    let size = 0
    const chunks = yield* request.stream.pipe(
      Stream.mapError(() => invalid("the request body could not be read")),
      Stream.mapEffect((chunk) => (size += chunk.length) > limit ? Effect.fail(refusal) : Effect.succeed(chunk)),
      Stream.runCollect
    )
    return Buffer.concat(Chunk.toReadonlyArray(chunks))
  })

/** A JSON body carrying media (as base64 or a URL), decoded by `schema`. */
const readJson = <A, I>(request: HttpServerRequest.HttpServerRequest, schema: Schema.Schema<A, I>, maxBytes: number) =>
  Effect.gen(function*() {
    const body = yield* readBody(request, mediaJsonBodyLimit(maxBytes), tooLarge(maxBytes))
    const parsed = yield* Effect.try({ try: () => JSON.parse(body.toString("utf8")) as unknown, catch: () => invalid("the body is not valid JSON") })
    if (isTooDeep(parsed)) return yield* invalid(`the JSON body nests more than ${MAX_JSON_DEPTH} levels deep`)
    return yield* decodeOrRefuse(schema, parsed)
  })

const fromJson = (request: HttpServerRequest.HttpServerRequest, kind: MediaKind, maxBytes: number) =>
  Effect.map(readJson(request, SendMediaRequest, maxBytes), (payload) => toInput(kind, payload, payload.media))

/** The uploaded file of a multipart form, as a media source. */
const fileSource = (file: { readonly path: string; readonly contentType: string; readonly name: string }) =>
  Effect.map(
    Effect.tryPromise({ try: () => fs.readFile(file.path), catch: () => invalid("the uploaded file could not be read") }),
    (data): MediaSource => ({ data: new Uint8Array(data), mimetype: file.contentType, filename: file.name === "" ? undefined : file.name })
  )

const fromMultipart = (request: HttpServerRequest.HttpServerRequest, kind: MediaKind, maxBytes: number) =>
  Effect.gen(function*() {
    const payload = yield* readForm(request, MediaForm, maxBytes)
    return toInput(kind, { ...payload, ptt: payload.ptt === undefined ? undefined : payload.ptt === "true" }, yield* fileSource(payload.file))
  })

/** A multipart/form-data body (a `file` part, fields as text), decoded by `schema`. */
const readForm = <A, I>(request: HttpServerRequest.HttpServerRequest, schema: Schema.Schema<A, I>, maxBytes: number) =>
  Effect.gen(function*() {
    const boundary = boundaryOf(request.headers["content-type"])
    if (boundary === undefined) return yield* invalid("a multipart/form-data body needs a boundary in its Content-Type")
    const guard = new ClosingGuard(boundary)
    const body = NodeHttpServerRequest.toIncomingMessage(request).pipe(guard)
    const form = yield* NodeMultipart.persisted(body, request.headers).pipe(
      Multipart.withLimits({ maxFileSize: Option.some(maxBytes), maxFieldSize: 64 * 1024, maxParts: Option.some(16) }),
      HttpIncomingMessage.withMaxBodySize(Option.some(maxBytes + 1024 * 1024)),
      Effect.mapError((error) => {
        const reason = multipartReason(error)
        return reason === "FileTooLarge" || reason === "BodyTooLarge"
          ? tooLarge(maxBytes)
          : invalid(`the multipart body could not be read (${reason})`)
      })
    )
    if (!guard.sawClose) return yield* invalid("the multipart body ends before its closing boundary")
    return yield* decodeOrRefuse(schema, form)
  })

const toInput = (
  kind: MediaKind,
  payload: {
    readonly chatId: string
    readonly caption?: string | undefined
    readonly filename?: string | undefined
    readonly quotedMessageId?: string | undefined
    readonly ptt?: boolean | undefined
    readonly mentions?: ReadonlyArray<string> | undefined
    readonly typingMs?: TypingMs | undefined
  },
  source: MediaSource
): SendMediaInput => ({
  chatId: payload.chatId,
  kind,
  source,
  caption: payload.caption,
  filename: payload.filename,
  ptt: payload.ptt,
  quotedMessageId: payload.quotedMessageId,
  mentions: payload.mentions,
  typingMs: payload.typingMs
})

type MediaBodyError = ValidationFailed | PayloadTooLarge | UnsupportedMediaType
type MediaBodyContext = Scope.Scope | FileSystem.FileSystem | Path.Path

/** Reads the body as JSON or as multipart, whichever the caller chose; any other content type is a 415. */
const eitherBody = <A>(
  request: HttpServerRequest.HttpServerRequest,
  readers: {
    readonly json: Effect.Effect<A, MediaBodyError, MediaBodyContext>
    readonly multipart: Effect.Effect<A, MediaBodyError, MediaBodyContext>
  }
): Effect.Effect<A, MediaBodyError, MediaBodyContext> => {
  const contentType = (request.headers["content-type"] ?? "").toLowerCase()
  if (contentType.startsWith("application/json")) return readers.json
  if (contentType.startsWith("multipart/form-data")) return readers.multipart
  return Effect.fail(new UnsupportedMediaType({
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: "send media as application/json or multipart/form-data"
  }))
}

/** The send, from whichever body the caller chose. */
export const readMediaRequest = (request: HttpServerRequest.HttpServerRequest, kind: MediaKind, maxBytes: number) =>
  eitherBody<SendMediaInput>(request, { json: fromJson(request, kind, maxBytes), multipart: fromMultipart(request, kind, maxBytes) })

const PictureForm = Schema.Struct({ file: Multipart.SingleFileSchema })

/** What the contract documents for a picture (profile or group): `{media}` as JSON, or a `file` part. */
export const PicturePayload = Schema.Union(PictureRequest, HttpApiSchema.Multipart(PictureForm))

/** A new picture's source, from whichever body the caller chose. */
export const readPictureRequest = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  eitherBody<MediaSource>(request, {
    json: Effect.map(readJson(request, PictureRequest, maxBytes), (payload) => payload.media),
    multipart: Effect.flatMap(readForm(request, PictureForm, maxBytes), (form) => fileSource(form.file))
  })
