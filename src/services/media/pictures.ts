import { Effect } from "effect"
import { loadSharp } from "../../runtime/lazyLibraries.js"
import { ValidationFailed } from "../../domain/Errors.js"
import type { MediaSource } from "../../domain/Message.js"
import { PICTURE_SIZE } from "../../domain/Profile.js"
import type { MediaIntakeService } from "../MediaIntake.js"
import { sniff } from "./sniff.js"

/** What WhatsApp accepts as a profile or group picture before it is made square. */
const pictureTypes = ["image/jpeg", "image/png", "image/webp"]

const invalidPicture = (message: string) => new ValidationFailed({ code: "INVALID_PICTURE", message })

/**
 * Makes WhatsApp's picture of any JPEG, PNG or WebP (told by the bytes): the largest centred
 * square, scaled to 640×640 and encoded as JPEG. WhatsApp shows pictures as squares (round in
 * its apps) and refuses others; doing it here gives the same result on every engine.
 */
export const toPicture = (data: Uint8Array): Effect.Effect<Uint8Array, ValidationFailed> =>
  Effect.gen(function*() {
    const type = yield* sniff(data)
    if (type === undefined || !pictureTypes.includes(type.mime)) {
      return yield* invalidPicture(`a picture must be ${pictureTypes.join(", ")}; these bytes are ${type?.mime ?? "of no type we recognise"}`)
    }
    const jpeg = yield* Effect.tryPromise({
      try: async () =>
        (await loadSharp())(data)
          .rotate() // a phone photo's EXIF orientation, applied before cropping
          .resize(PICTURE_SIZE, PICTURE_SIZE, { fit: "cover", position: "centre" })
          .flatten({ background: "#ffffff" }) // JPEG has no transparency
          .jpeg({ quality: 85 })
          .toBuffer(),
      // The magic numbers were right but the image is not (truncated, corrupt).
      catch: () => invalidPicture(`the picture is ${type.mime} by its magic numbers, but it cannot be decoded`)
    })
    return new Uint8Array(jpeg)
  })

/**
 * A new picture as the API takes it: fetched or decoded like any image send (size-capped, a URL
 * fetched under the same rules), then made WhatsApp's square JPEG. Any bytes that are not a
 * usable JPEG, PNG or WebP are a 400.
 */
export const takeInPicture = (intake: MediaIntakeService, source: MediaSource) =>
  intake.accept("image", source).pipe(
    Effect.catchTag("UnsupportedMediaType", (error) => Effect.fail(invalidPicture(error.message))),
    Effect.flatMap((media) => toPicture(media.data))
  )
