import { type FileSystem, HttpApiSchema, HttpIncomingMessage, type HttpServerRequest, Multipart, type Path } from "@effect/platform"
import { Chunk, Effect, Option, ParseResult, Schema, type Scope, Stream } from "effect"
import * as fs from "node:fs/promises"
import { PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "../services/Errors.js"
import { ChatIdFromInput } from "../services/Ids.js"
import type { MediaKind, MediaSource, SendMediaInput } from "../services/Message.js"
import { describeIssues } from "./ErrorResponses.js"

/**
 * The body of a media send (`send-image`, `send-video`, `send-audio`, `send-document`), as JSON
 * (`media: {url}` or `media: {data (base64), mimetype?, filename?}`) or as multipart/form-data
 * (a `file` part plus the same fields). Read here by hand rather than by the router: the body
 * may be tens of megabytes, and too much of it must be a 413, not an unreadable request.
 */

const caption = Schema.String.pipe(Schema.maxLength(4096, { message: () => "caption must be at most 4096 characters" }))
const filename = Schema.String.pipe(Schema.maxLength(255, { message: () => "filename must be at most 255 characters" }))

const fields = {
  chatId: ChatIdFromInput,
  caption: Schema.optional(caption),
  filename: Schema.optional(filename),
  quotedMessageId: Schema.optional(Schema.String)
}

export const SendMediaJson = Schema.Struct({
  ...fields,
  media: Schema.Union(
    Schema.Struct({ url: Schema.String }),
    Schema.Struct({
      data: Schema.String.annotations({ description: "the file, base64-encoded" }),
      mimetype: Schema.optional(Schema.String),
      filename: Schema.optional(filename)
    })
  ),
  ptt: Schema.optional(Schema.Boolean.annotations({ description: "send-audio: a voice note" })),
  mentions: Schema.optional(Schema.Array(ChatIdFromInput))
}).annotations({ identifier: "SendMediaJson" })

const MediaForm = Schema.Struct({
  ...fields,
  file: Multipart.SingleFileSchema,
  ptt: Schema.optional(Schema.Literal("true", "false"))
})

export const SendMediaForm = HttpApiSchema.Multipart(MediaForm)

/** What the contract documents for every media endpoint: either body. */
export const SendMediaPayload = Schema.Union(SendMediaJson, SendMediaForm)

/** base64 is 4/3 of the bytes; the JSON around it gets a generous megabyte. */
const jsonBodyLimit = (maxBytes: number) => Math.ceil(maxBytes / 3) * 4 + 1024 * 1024

const tooLarge = (maxBytes: number) =>
  new PayloadTooLarge({ code: "PAYLOAD_TOO_LARGE", message: `media may be at most ${maxBytes} bytes (MEDIA_MAX_BYTES)` })

const invalid = (message: string, details?: unknown) =>
  new ValidationFailed({ code: "VALIDATION_FAILED", message, ...(details === undefined ? {} : { details }) })

/** Decode failures as API.md's 400, without quoting the input (it may be a URL with a token). */
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

const fromJson = (request: HttpServerRequest.HttpServerRequest, kind: MediaKind, maxBytes: number) =>
  Effect.gen(function*() {
    const body = yield* readBody(request, jsonBodyLimit(maxBytes), tooLarge(maxBytes))
    const parsed = yield* Effect.try({ try: () => JSON.parse(body.toString("utf8")) as unknown, catch: () => invalid("the body is not valid JSON") })
    const payload = yield* decodeOrRefuse(SendMediaJson, parsed)
    let source: MediaSource
    if ("url" in payload.media) {
      source = { url: payload.media.url }
    } else {
      const data = payload.media.data
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data.replace(/\s+/g, ""))) return yield* invalid("media.data must be base64")
      source = { data: new Uint8Array(Buffer.from(data, "base64")), mimetype: payload.media.mimetype, filename: payload.media.filename }
    }
    return toInput(kind, payload, source)
  })

const fromMultipart = (request: HttpServerRequest.HttpServerRequest, kind: MediaKind, maxBytes: number) =>
  Effect.gen(function*() {
    const form = yield* request.multipart.pipe(
      Multipart.withLimits({ maxFileSize: Option.some(maxBytes), maxFieldSize: 64 * 1024, maxParts: Option.some(16) }),
      HttpIncomingMessage.withMaxBodySize(Option.some(maxBytes + 1024 * 1024)),
      Effect.mapError((error) =>
        error.reason === "FileTooLarge" || error.reason === "BodyTooLarge"
          ? tooLarge(maxBytes)
          : invalid(`the multipart body could not be read (${error.reason})`)
      )
    )
    const payload = yield* decodeOrRefuse(MediaForm, form)
    const data = yield* Effect.tryPromise({
      try: () => fs.readFile(payload.file.path),
      catch: () => invalid("the uploaded file could not be read")
    })
    const source: MediaSource = {
      data: new Uint8Array(data),
      mimetype: payload.file.contentType,
      filename: payload.file.name === "" ? undefined : payload.file.name
    }
    return toInput(kind, { ...payload, ptt: payload.ptt === undefined ? undefined : payload.ptt === "true" }, source)
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
  mentions: payload.mentions
})

/** The send, from whichever body the caller chose; any other content type is a 415. */
export const readMediaRequest = (
  request: HttpServerRequest.HttpServerRequest,
  kind: MediaKind,
  maxBytes: number
): Effect.Effect<SendMediaInput, ValidationFailed | PayloadTooLarge | UnsupportedMediaType, Scope.Scope | FileSystem.FileSystem | Path.Path> => {
  const contentType = (request.headers["content-type"] ?? "").toLowerCase()
  if (contentType.startsWith("application/json")) return fromJson(request, kind, maxBytes)
  if (contentType.startsWith("multipart/form-data")) return fromMultipart(request, kind, maxBytes)
  return Effect.fail(new UnsupportedMediaType({
    code: "UNSUPPORTED_MEDIA_TYPE",
    message: "send media as application/json or multipart/form-data"
  }))
}
