import { Either } from "effect"
import type { UnsupportedMediaType } from "../../domain/Errors.js"
import type { MediaKind } from "../../domain/Message.js"
import { essenceOf, extensionOfType, isBuiltOn, typeOfFilename } from "./documentTypes.js"
import { unsupportedMediaType } from "./errors.js"
import type { SniffedType } from "./sniff.js"

/**
 * What WhatsApp takes on each media endpoint, as sniffed (sniff.ts makes the names canonical:
 * an .m4a is audio/mp4). Documents take anything.
 */
export const acceptedTypes = {
  image: ["image/jpeg", "image/png", "image/webp"],
  // Not QuickTime (.mov): WhatsApp's apps convert it to MP4 before sending, and we don't transcode.
  video: ["video/mp4", "video/3gpp"],
  // Ogg only with Opus, the voice-note codec (Vorbis does not play); no WAV or FLAC.
  audio: ["audio/ogg; codecs=opus", "audio/mpeg", "audio/mp4", "audio/aac", "audio/amr"],
  // WebP goes as it is; the others are converted to a 512×512 WebP (see stickers.ts).
  sticker: ["image/webp", "image/png", "image/jpeg", "image/gif"]
} as const satisfies Record<Exclude<MediaKind, "document">, ReadonlyArray<string>>

export interface MediaType {
  readonly mimetype: string
  /** For a default file name; `undefined` when the type has no usual extension. */
  readonly extension: string | undefined
}

const octetStream = "application/octet-stream"

const fromType = (mimetype: string): MediaType => ({ mimetype, extension: extensionOfType(mimetype) })

/** A declared type worth listening to: well-formed, and not octet-stream, which senders say when they don't know. */
const informativeType = (declared: string | undefined) => {
  const essence = essenceOf(declared)
  return essence === octetStream ? undefined : essence
}

/**
 * A document is whatever it is: what the bytes say; failing that (text has no magic number)
 * the declared type, if informative; failing that the file name's extension.
 */
const documentType = (sniffed: SniffedType | undefined, declared: string | undefined, filename: string | null): MediaType => {
  const declaredType = informativeType(declared)
  const namedType = typeOfFilename(filename)
  if (sniffed === undefined) return fromType(declaredType ?? namedType ?? octetStream)
  // The bytes win, but a bare container may be named more exactly by the caller: a .doc is
  // "x-cfb" to the sniffer, and the caller's application/msword names the same bytes better.
  const refined = [declaredType, namedType].find((type) => isBuiltOn(type, sniffed.mime))
  return refined === undefined ? { mimetype: sniffed.mime, extension: sniffed.ext } : fromType(refined)
}

/**
 * The type of media sent to an endpoint. For image, video and audio the bytes decide: they must
 * be one of the endpoint's types, and a declared type that says otherwise is ignored (callers
 * get it wrong far more often than the magic numbers do).
 */
export const mediaTypeFor = (
  kind: MediaKind,
  sniffed: SniffedType | undefined,
  declared: string | undefined,
  filename: string | null
): Either.Either<MediaType, UnsupportedMediaType> => {
  if (kind === "document") return Either.right(documentType(sniffed, declared, filename))
  const accepted: ReadonlyArray<string> = acceptedTypes[kind]
  return sniffed !== undefined && accepted.includes(sniffed.mime)
    ? Either.right({ mimetype: sniffed.mime, extension: sniffed.ext })
    : Either.left(unsupportedMediaType(kind, sniffed?.mime ?? null, accepted))
}
