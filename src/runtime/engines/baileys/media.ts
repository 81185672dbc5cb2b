import { type AnyMediaMessageContent, downloadMediaMessage, type proto, type WAMessage, type WASocket } from "@whiskeysockets/baileys"
import { type Duration, Effect } from "effect"
import type { Dispatcher } from "undici"
import { EngineError, type InboundMedia, type MediaKind, type OutboundMedia } from "../../Engine.js"
import { fetchOptionsOf } from "./agents.js"
import { engineErrorOf, statusCodeOf } from "./disconnect.js"

/**
 * Media between the gateway and Baileys, both ways. A WhatsApp media message carries no bytes:
 * the sender uploads them encrypted to a media server and sends the key, the hashes and the
 * location (`url`, `directPath`) inside the Signal message; the recipient downloads and decrypts.
 */

// --- Outbound -----------------------------------------------------------------------------

/** Media to send in Baileys' terms: the bytes go as a Buffer, Baileys encrypts and uploads them. */
export const mediaMessageOf = (media: OutboundMedia, mentions: ReadonlyArray<string>): AnyMediaMessageContent => {
  const { caption, data, filename, kind, mimetype, ptt } = media
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const captioned = caption === null ? {} : { caption, ...(mentions.length === 0 ? {} : { mentions: [...mentions] }) }
  switch (kind) {
    case "image":
      return { image: bytes, mimetype, ...captioned }
    case "video":
      return { video: bytes, mimetype, ...captioned }
    case "audio":
      return { audio: bytes, mimetype, ptt }
    case "document":
      return { document: bytes, mimetype, fileName: filename ?? "file", ...captioned }
    case "sticker":
      // Stickers carry no caption; WhatsApp shows WebP (the gateway converts other images on intake).
      return { sticker: bytes, mimetype }
  }
}

/**
 * A failed send. Baileys reports every failed upload as `Boom("Media upload failed on all
 * hosts", 500)` and logs the cause (TLS, refused, 4xx) as a warning only.
 */
export const sendErrorOf = (error: unknown): EngineError =>
  error instanceof Error && /^Media upload failed/.test(error.message)
    ? new EngineError({
      code: "MEDIA_UPLOAD_FAILED",
      message: "baileys: the media could not be uploaded to WhatsApp's media servers (the cause is in the warnings logged before)",
      transient: true
    })
    : engineErrorOf("SEND", error)

// --- Inbound ------------------------------------------------------------------------------

/** The media kinds, by the field WhatsApp carries them in. */
const mediaFields: ReadonlyArray<
  readonly [MediaKind, "imageMessage" | "videoMessage" | "audioMessage" | "documentMessage" | "stickerMessage"]
> = [
  ["image", "imageMessage"],
  ["video", "videoMessage"],
  ["audio", "audioMessage"],
  ["document", "documentMessage"],
  ["sticker", "stickerMessage"]
]

/** What a received media message says about its media (everything of `InboundMedia` but `ref`). */
export interface MediaContent {
  readonly kind: MediaKind
  readonly caption: string | null
  readonly mimetype: string
  readonly filename: string | null
  readonly size: number | null
  readonly ptt: boolean
}

/** The fields the media kinds share, as far as each has them. */
interface MediaFields {
  readonly caption?: string | null
  readonly mimetype?: string | null
  readonly fileName?: string | null
  readonly fileLength?: number | { toString(): string } | null
  readonly ptt?: boolean | null
}

const nonEmpty = (text: string | null | undefined): string | null => (typeof text === "string" && text !== "" ? text : null)

/** `fileLength` is a uint64, decoded as a Long (or a number when built by hand). */
const sizeOf = (length: number | { toString(): string } | null | undefined): number | null => {
  if (length == null) return null
  const size = Number(length.toString())
  return Number.isSafeInteger(size) && size >= 0 ? size : null
}

/** The media of unwrapped content (see `normalizeMessageContent`), or null when it has none the gateway shows. */
export const mediaContentOf = (content: proto.IMessage): MediaContent | null => {
  for (const [kind, field] of mediaFields) {
    const media: MediaFields | null | undefined = content[field]
    if (media == null) continue
    return {
      kind,
      // Audio and stickers have no caption field.
      caption: nonEmpty(media.caption),
      mimetype: nonEmpty(media.mimetype) ?? "application/octet-stream",
      filename: kind === "document" ? nonEmpty(media.fileName) : null,
      size: sizeOf(media.fileLength),
      ptt: kind === "audio" && media.ptt === true
    }
  }
  return null
}

/**
 * `InboundMedia.ref` of this engine: what `downloadMediaMessage` and a re-upload request need,
 * the message's key and content. It lives in memory only, for the download that follows the
 * `MessageReceived` on the same connection.
 */
export class MediaRef {
  constructor(readonly message: WAMessage) {}
}

export const mediaRefOf = (message: WAMessage): MediaRef => new MediaRef({ key: message.key, message: message.message ?? null })

/** The two network operations a download may take, as the socket offers them (fakes in tests). */
export interface MediaTransfer {
  /** Fetches the encrypted file from the media server and decrypts it. */
  readonly download: (message: WAMessage) => Promise<Uint8Array>
  /** Asks the sender's phone to upload the file again; resolves with the message pointing at the new copy. */
  readonly reupload: (message: WAMessage) => Promise<WAMessage>
}

export const socketTransfer = (sock: Pick<WASocket, "updateMediaMessage">, dispatcher: Dispatcher | undefined): MediaTransfer => ({
  download: (message) => downloadMediaMessage(message, "buffer", { options: fetchOptionsOf(dispatcher) }),
  reupload: (message) => sock.updateMediaMessage(message)
})

/** What media servers answer for a file they no longer keep (WhatsApp drops media after a while). */
const goneStatuses = new Set([404, 410])

/** Baileys throws `Boom("Failed to fetch stream from <url>", { statusCode, data: { url } })` on an HTTP error. */
const httpStatusOf = (error: unknown): number | undefined =>
  typeof (error as { readonly data?: { readonly url?: unknown } } | null)?.data?.url === "string" ? statusCodeOf(error) : undefined

const isGone = (error: unknown): boolean => goneStatuses.has(httpStatusOf(error) ?? 0)

/** A failed download as an `EngineError`; never quotes the URL (its query holds access tokens). */
export const downloadErrorOf = (error: unknown): EngineError => {
  if (error instanceof EngineError) return error
  const status = httpStatusOf(error)
  if (status !== undefined) {
    return goneStatuses.has(status)
      ? new EngineError({ code: "MEDIA_GONE", message: `baileys: the media server no longer has the file (${status})`, transient: false })
      : new EngineError({
        code: `MEDIA_DOWNLOAD_FAILED_${status}`,
        message: `baileys: the media server answered ${status}`,
        transient: status >= 500 || status === 408 || status === 429
      })
  }
  // undici: `TypeError("fetch failed", { cause: <the socket or TLS error> })`.
  const cause = (error as { readonly cause?: { readonly code?: unknown } } | null)?.cause
  if (error instanceof TypeError && typeof cause?.code === "string") {
    return new EngineError({
      code: "MEDIA_SERVER_UNREACHABLE",
      message: `baileys: the media server could not be reached (${cause.code})`,
      // A certificate that does not verify will not verify on the next try either.
      transient: !/CERT|SELF_SIGNED|ERR_TLS/.test(cause.code)
    })
  }
  return new EngineError({
    code: "MEDIA_DOWNLOAD_FAILED",
    message: `baileys: ${error instanceof Error ? error.message : String(error)}`,
    transient: false
  })
}

/**
 * How long to wait for the sender's phone to upload expired media again. Baileys waits for its
 * answer without a limit (until the socket closes); an offline phone never answers.
 */
export const REUPLOAD_TIMEOUT: Duration.DurationInput = "15 seconds"

/**
 * Downloads a received message's media. When the media server no longer has the file (404/410)
 * the sender's phone is asked to upload it again (`updateMediaMessage`), then it is fetched once
 * more. rc14's `downloadMediaMessage` means to do this itself but never does: it tests
 * `error.status`, while its Boom carries `output.statusCode`.
 */
export const downloadMedia = (
  transfer: MediaTransfer,
  media: InboundMedia,
  reuploadTimeout: Duration.DurationInput = REUPLOAD_TIMEOUT
): Effect.Effect<Uint8Array, EngineError> =>
  Effect.gen(function*() {
    if (!(media.ref instanceof MediaRef)) {
      return yield* new EngineError({ code: "MEDIA_NOT_FOUND", message: "baileys: not a media reference of this engine", transient: false })
    }
    const { message } = media.ref
    const fetchOnce = (from: WAMessage) => Effect.tryPromise({ try: () => transfer.download(from), catch: (error) => error })
    const reupload = Effect.tryPromise({
      try: () => transfer.reupload(message),
      catch: (error) => engineErrorOf("MEDIA_REUPLOAD", error)
    }).pipe(
      Effect.timeoutFail({
        duration: reuploadTimeout,
        onTimeout: () =>
          new EngineError({ code: "MEDIA_REUPLOAD_TIMEOUT", message: "baileys: the sender's phone did not upload the expired media again", transient: true })
      })
    )
    return yield* fetchOnce(message).pipe(
      Effect.catchIf(isGone, () => Effect.flatMap(reupload, fetchOnce)),
      Effect.mapError(downloadErrorOf)
    )
  })
