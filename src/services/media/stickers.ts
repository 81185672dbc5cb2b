import { Effect } from "effect"
import { loadSharp } from "../../runtime/lazyLibraries.js"
import type { UnsupportedMediaType } from "../../domain/Errors.js"
import { undecodableMedia } from "./errors.js"
import type { MediaType } from "./mediaTypes.js"

/** WhatsApp's stickers are 512×512 WebP images; anything else is shown badly or not at all. */
export const stickerSize = 512

const webp: MediaType = { mimetype: "image/webp", extension: "webp" }

/**
 * Makes a sticker of an accepted image: a WebP goes as it is (the caller made it for the
 * purpose); a PNG, JPEG or GIF is fitted whole into 512×512 on a transparent background and
 * encoded as WebP. Every frame of an animated GIF is kept, giving an animated WebP.
 */
export const toSticker = (
  data: Uint8Array,
  type: MediaType
): Effect.Effect<{ readonly data: Uint8Array; readonly type: MediaType }, UnsupportedMediaType> =>
  type.mimetype === webp.mimetype
    ? Effect.succeed({ data, type })
    : Effect.tryPromise({
      try: async () =>
        (await loadSharp())(data, { animated: type.mimetype === "image/gif" })
          .resize(stickerSize, stickerSize, { fit: "contain", background: { r: 0, g: 0, b: 0, alpha: 0 } })
          .webp()
          .toBuffer(),
      // The magic numbers were right but the image is not (truncated, corrupt): the bytes are unusable.
      catch: () => undecodableMedia("sticker", type.mimetype)
    }).pipe(Effect.map((converted) => ({ data: new Uint8Array(converted), type: webp })))

/** A converted sticker's name says what it now is: `cat.png` becomes `cat.webp`. */
export const stickerFilename = (filename: string | null, type: MediaType): string | null =>
  filename === null || type.extension === undefined ? filename : `${filename.replace(/\.[^.]*$/, "")}.${type.extension}`
