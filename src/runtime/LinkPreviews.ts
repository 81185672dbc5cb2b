import { Context, Duration, Effect, Layer, type Option } from "effect"
import type { LinkPreview } from "../domain/Message.js"
import { AppSettings } from "../domain/Settings.js"
import { allowAnyAddress, isPublicAddress } from "./network/addressPolicy.js"
import { fetchLinkPreview } from "./network/linkPreview.js"

/** Everything a preview takes (page and image) must be done in this, or the text goes without. */
export const linkPreviewTimeout = Duration.seconds(5)

export interface LinkPreviewsService {
  /**
   * The preview of the first http(s) URL in `text`, fetched for a session (through its proxy,
   * when it has one); none when there is no URL or no preview could be made. Never fails.
   */
  readonly previewOf: (text: string, proxyUrl: string | null) => Effect.Effect<Option.Option<LinkPreview>>
}

/**
 * How the outbound lane gets a text's link preview. A port, so that tests and embedding apps
 * can put their own in (or `none`, to fetch nothing on their users' behalf).
 */
export class LinkPreviews extends Context.Tag("switchboard/LinkPreviews")<LinkPreviews, LinkPreviewsService>() {
  /** Fetched by the gateway through the same SSRF guard as media URLs (`MEDIA_ALLOW_PRIVATE`). */
  static readonly layer = Layer.effect(
    LinkPreviews,
    Effect.map(AppSettings, ({ media }) => ({
      previewOf: (text, proxyUrl) =>
        fetchLinkPreview(text, {
          isAllowed: media.allowPrivate ? allowAnyAddress : isPublicAddress,
          timeout: linkPreviewTimeout,
          proxyUrl: proxyUrl ?? undefined
        })
    }))
  )

  /** No previews at all. */
  static readonly none = Layer.succeed(LinkPreviews, { previewOf: () => Effect.succeedNone })
}
