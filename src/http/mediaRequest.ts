import { type FileSystem, HttpIncomingMessage, type HttpServerRequest, Multipart, type Path } from "@effect/platform"
import { NodeHttpServerRequest, NodeMultipart } from "@effect/platform-node"
import { Chunk, Effect, Option, ParseResult, Schema, type Scope, Stream } from "effect"
import * as fs from "node:fs/promises"
import { PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "../domain/Errors.js"
import { type MediaKind, type MediaSource, type SendMediaInput, SendMediaRequest, type TypingMs } from "../domain/Message.js"
import { PictureRequest } from "../domain/Profile.js"
import { MediaStatusRequest } from "../domain/Status.js"
import type { MediaStatusInput } from "../services/StatusUpdates.js"
import { describeIssues, multipartReason } from "./ErrorResponses.js"
import { MediaForm, MediaStatusForm, PictureForm } from "./mediaForms.js"
import { boundaryOf, ClosingGuard, isTooDeep, MAX_JSON_DEPTH } from "./bodyGuards.js"

/**
 * The body of a media send (`send-image`, `send-video`, `send-audio`, `send-document`), as JSON
 * (`media: {url}` or `media: {data (base64), mimetype?, filename?}`) or as multipart/form-data
 * (a `file` part plus the same fields). Read here by hand rather than by the router: the body
 * may be tens of megabytes, and too much of it must be a 413, not an unreadable request.
 */


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

/**
 * One kind of media body: the fields it takes as JSON (`media` among them) and as a multipart
 * form (a `file` part among them), and what each becomes.
 */
interface MediaBody<Json, Form, Out> {
  // Any encoded form: both are decoded from what was parsed off the wire (`decodeUnknown`).
  readonly json: Schema.Schema<Json, any>
  readonly form: Schema.Schema<Form, any>
  readonly fromJson: (payload: Json) => Out
  readonly fromForm: (payload: Form, source: MediaSource) => Out
}

const fromJson = <Json, Form, Out>(request: HttpServerRequest.HttpServerRequest, body: MediaBody<Json, Form, Out>, maxBytes: number) =>
  Effect.gen(function*() {
    const raw = yield* readBody(request, mediaJsonBodyLimit(maxBytes), tooLarge(maxBytes))
    const parsed = yield* Effect.try({ try: () => JSON.parse(raw.toString("utf8")) as unknown, catch: () => invalid("the body is not valid JSON") })
    if (isTooDeep(parsed)) return yield* invalid(`the JSON body nests more than ${MAX_JSON_DEPTH} levels deep`)
    return body.fromJson(yield* decodeOrRefuse(body.json, parsed))
  })

const fromMultipart = <Json, Form extends { readonly file: Multipart.PersistedFile }, Out>(
  request: HttpServerRequest.HttpServerRequest,
  body: MediaBody<Json, Form, Out>,
  maxBytes: number
) =>
  Effect.gen(function*() {
    const boundary = boundaryOf(request.headers["content-type"])
    if (boundary === undefined) return yield* invalid("a multipart/form-data body needs a boundary in its Content-Type")
    const guard = new ClosingGuard(boundary)
    const stream = NodeHttpServerRequest.toIncomingMessage(request).pipe(guard)
    const form = yield* NodeMultipart.persisted(stream, request.headers).pipe(
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
    const payload = yield* decodeOrRefuse(body.form, form)
    const data = yield* Effect.tryPromise({
      try: () => fs.readFile(payload.file.path),
      catch: () => invalid("the uploaded file could not be read")
    })
    const source: MediaSource = {
      data: new Uint8Array(data),
      mimetype: payload.file.contentType,
      filename: payload.file.name === "" ? undefined : payload.file.name
    }
    return body.fromForm(payload, source)
  })

/** The body as JSON or multipart, as its content type says; any other content type is a 415. */
const readMediaBody = <Json, Form extends { readonly file: Multipart.PersistedFile }, Out>(
  request: HttpServerRequest.HttpServerRequest,
  body: MediaBody<Json, Form, Out>,
  maxBytes: number
): Effect.Effect<Out, ValidationFailed | PayloadTooLarge | UnsupportedMediaType, Scope.Scope | FileSystem.FileSystem | Path.Path> => {
  const contentType = (request.headers["content-type"] ?? "").toLowerCase()
  if (contentType.startsWith("application/json")) return fromJson(request, body, maxBytes)
  if (contentType.startsWith("multipart/form-data")) return fromMultipart(request, body, maxBytes)
  return Effect.fail(new UnsupportedMediaType({
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: "send media as application/json or multipart/form-data"
  }))
}

const sendMediaBody = (kind: MediaKind): MediaBody<typeof SendMediaRequest.Type, typeof MediaForm.Type, SendMediaInput> => ({
  json: SendMediaRequest,
  form: MediaForm,
  fromJson: (payload) => toInput(kind, payload, payload.media),
  fromForm: (payload, source) => toInput(kind, { ...payload, ptt: payload.ptt === undefined ? undefined : payload.ptt === "true" }, source)
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

/** The send, from whichever body the caller chose; any other content type is a 415. */
export const readMediaRequest = (request: HttpServerRequest.HttpServerRequest, kind: MediaKind, maxBytes: number) =>
  readMediaBody(request, sendMediaBody(kind), maxBytes)


const mediaStatusBody = (kind: "image" | "video"): MediaBody<MediaStatusRequest, typeof MediaStatusForm.Type, MediaStatusInput> => ({
  json: MediaStatusRequest,
  form: MediaStatusForm,
  fromJson: ({ caption, contacts, media }) => ({ kind, source: media, caption, contacts }),
  fromForm: ({ caption, contacts }, source) => ({ kind, source, caption, contacts })
})

/** An image or video status update, from whichever body the caller chose. */
export const readMediaStatusRequest = (request: HttpServerRequest.HttpServerRequest, kind: "image" | "video", maxBytes: number) =>
  readMediaBody(request, mediaStatusBody(kind), maxBytes)


const pictureBody: MediaBody<typeof PictureRequest.Type, typeof PictureForm.Type, MediaSource> = {
  json: PictureRequest,
  form: PictureForm,
  fromJson: ({ media }) => media,
  fromForm: (_, source) => source
}

/** A new picture's source, from whichever body the caller chose. */
export const readPictureRequest = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  readMediaBody(request, pictureBody, maxBytes)
