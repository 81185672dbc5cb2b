import { Clock, Duration, Effect, Option } from "effect"
import { loadLinkPreview, loadSharp } from "../lazyLibraries.js"
import type { LinkPreview } from "../../domain/Message.js"
import type { AddressPolicy } from "./addressPolicy.js"
import { fetchMedia, type FetchMediaOptions } from "./fetchMedia.js"

export interface LinkPreviewOptions {
  readonly isAllowed: AddressPolicy
  /** For everything: the page, then its image. */
  readonly timeout: Duration.Duration
  /** The session's proxy (credentials included; never logged), or none. */
  readonly proxyUrl: string | undefined
}

/** A page's head is near its start: the rest of a big page is not read. */
const maxPageBytes = 1024 * 1024
const maxImageBytes = 5 * 1024 * 1024
const maxRedirects = 5
/** WhatsApp shows a small square beside the title; larger thumbnails only weigh the message down. */
export const thumbnailMaxSide = 192

// Trailing punctuation ends a sentence, not the URL ("see https://example.com/a.").
const urlInText = /\bhttps?:\/\/[^\s<>"'`]+/i
const trailingPunctuation = /[.,;:!?)\]}*_~]+$/

/** The first http(s) URL of a text, as written in it (WhatsApp matches the preview to that text). */
export const firstUrlIn = (text: string): string | undefined => urlInText.exec(text)?.[0].replace(trailingPunctuation, "")

const htmlTypes = new Set(["text/html", "application/xhtml+xml"])
const essence = (type: string | undefined) => type?.split(";")[0]?.trim().toLowerCase()

/** The page's text, in its declared charset when the runtime knows it (else UTF-8). */
const decodeText = (data: Uint8Array, contentType: string | undefined) => {
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(contentType ?? "")?.[1]
  try {
    return new TextDecoder(charset ?? "utf-8").decode(data)
  } catch {
    return new TextDecoder("utf-8").decode(data)
  }
}

/** Why no preview (or no thumbnail) came: safe to log, as it never holds the URL's path or query. */
class NoPreview {
  readonly _tag = "NoPreview"
  constructor(readonly reason: string) {}
}

const thumbnailOf = (imageUrl: string, options: FetchMediaOptions) =>
  fetchMedia(imageUrl, options).pipe(
    Effect.flatMap(({ data }) =>
      Effect.tryPromise(async () =>
        (await loadSharp())(data)
          .resize(thumbnailMaxSide, thumbnailMaxSide, { fit: "inside", withoutEnlargement: true })
          .flatten({ background: "#ffffff" })
          .jpeg({ quality: 70 })
          .toBuffer()
      )
    ),
    Effect.map((jpeg) => jpeg.toString("base64"))
  )

const textOrNull = (text: string | undefined) => {
  const trimmed = text?.trim()
  return trimmed === undefined || trimmed === "" ? null : trimmed
}

/**
 * The preview of the first http(s) URL in `text`: the page's title, description and a
 * thumbnail of its image (og:image first), fetched through the SSRF guard within `timeout` in
 * all. None when the text has no URL, or the page cannot be fetched in time or is not HTML; a
 * preview without a thumbnail when only the image fails. Failures are logged at debug, naming
 * the host only.
 */
export const fetchLinkPreview = (text: string, options: LinkPreviewOptions): Effect.Effect<Option.Option<LinkPreview>> => {
  const url = firstUrlIn(text)
  if (url === undefined) return Effect.succeedNone
  const host = URL.canParse(url) ? new URL(url).host : "?"
  const fetchOptions = (timeout: Duration.Duration, maxBytes: number, truncate: boolean): FetchMediaOptions => ({
    maxBytes,
    timeout,
    isAllowed: options.isAllowed,
    maxRedirects,
    truncate,
    proxyUrl: options.proxyUrl
  })
  return Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const page = yield* fetchMedia(url, fetchOptions(options.timeout, maxPageBytes, true))
    if (!htmlTypes.has(essence(page.declaredType) ?? "")) return yield* Effect.fail(new NoPreview(`the page is ${essence(page.declaredType) ?? "of no declared type"}, not HTML`))
    const parsed = yield* Effect.tryPromise({
      try: async () =>
        (await loadLinkPreview()).getPreviewFromContent({
          url: page.url.href,
          data: decodeText(page.data, page.declaredType),
          headers: { "content-type": page.declaredType ?? "text/html" }
        }),
      catch: () => new NoPreview("the page could not be parsed")
    })
    const title = "title" in parsed ? textOrNull(parsed.title) : null
    const description = "description" in parsed ? textOrNull(parsed.description) : null
    const image = "images" in parsed ? parsed.images[0] : undefined
    const left = Duration.millis(Duration.toMillis(options.timeout) - ((yield* Clock.currentTimeMillis) - started))
    const thumbnail = image === undefined || Duration.toMillis(left) <= 0
      ? undefined
      : yield* thumbnailOf(image, fetchOptions(left, maxImageBytes, false)).pipe(
        Effect.tapError((error) => Effect.logDebug("link preview without a thumbnail", { host, reason: error instanceof Error ? error.message : String(error) })),
        Effect.option,
        Effect.map(Option.getOrUndefined)
      )
    return Option.some<LinkPreview>({ url, title, description, ...(thumbnail === undefined ? {} : { thumbnail }) })
  }).pipe(
    // The fetch's own timeout ends it; this one bounds the parsing and thumbnailing besides.
    Effect.timeoutFail({ duration: options.timeout, onTimeout: () => new NoPreview(`not done within ${Duration.format(options.timeout)}`) }),
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logDebug("sending without a link preview", {
          host,
          reason: error instanceof NoPreview ? error.reason : `${error.code}: ${error.message}`
        }),
        Option.none()
      )
    )
  )
}
