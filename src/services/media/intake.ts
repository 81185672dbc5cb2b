import { Effect } from "effect"
import { AppSettings } from "../../domain/Settings.js"
import type { MediaIntakeService } from "../MediaIntake.js"
import type { MediaKind, MediaSource } from "../../domain/Message.js"
import { allowAnyAddress, isPublicAddress } from "../../runtime/network/addressPolicy.js"
import { emptyMedia } from "./errors.js"
import { mediaTooLarge } from "../../runtime/network/fetchErrors.js"
import { fetchMedia, type FetchMediaOptions } from "../../runtime/network/fetchMedia.js"
import { cleanFilename } from "./filename.js"
import { mediaTypeFor } from "./mediaTypes.js"
import { sniff } from "./sniff.js"
import { stickerFilename, toSticker } from "./stickers.js"

/** How many redirects a media URL may take before the fetch gives up. */
const maxMediaRedirects = 5

/** The media intake of the settings: `MEDIA_MAX_BYTES`, `MEDIA_ALLOW_PRIVATE`, `MEDIA_FETCH_TIMEOUT_MS`. */
export const makeMediaIntake = Effect.gen(function*() {
  const { media } = yield* AppSettings
  const fetchOptions: FetchMediaOptions = {
    maxBytes: media.maxBytes,
    timeout: media.fetchTimeout,
    isAllowed: media.allowPrivate ? allowAnyAddress : isPublicAddress,
    maxRedirects: maxMediaRedirects
  }

  /** The bytes, and what the caller (or the server of the URL) says about them. */
  const gather = (source: MediaSource) =>
    "url" in source
      ? fetchMedia(source.url, fetchOptions)
      : Effect.succeed({ data: source.data, declaredType: source.mimetype, filename: source.filename })

  const accept = Effect.fn("MediaIntake.accept")(function*(kind: MediaKind, source: MediaSource) {
    const { data, declaredType, filename: givenName } = yield* gather(source)
    if (data.byteLength === 0) return yield* emptyMedia()
    if (data.byteLength > media.maxBytes) return yield* mediaTooLarge(media.maxBytes)
    const filename = cleanFilename(givenName)
    const type = yield* mediaTypeFor(kind, yield* sniff(data), declaredType, filename)
    if (kind === "sticker") {
      const sticker = yield* toSticker(data, type)
      return { data: sticker.data, mimetype: sticker.type.mimetype, filename: stickerFilename(filename, sticker.type) }
    }
    // A document always has a name on WhatsApp; make one up from its type if none came.
    const documentName = kind === "document" ? `file.${type.extension ?? "bin"}` : null
    return { data, mimetype: type.mimetype, filename: filename ?? documentName }
  })

  return { accept } satisfies MediaIntakeService
})
