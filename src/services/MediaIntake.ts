import { Context, type Effect, Layer } from "effect"
import type { PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "../domain/Errors.js"
import { makeMediaIntake } from "./media/intake.js"
import type { AcceptedMedia, MediaKind, MediaSource } from "../domain/Message.js"

/**
 * Takes in the media of a send, whichever way it came: fetches a URL (time-boxed, size-capped,
 * private addresses refused unless `MEDIA_ALLOW_PRIVATE`), enforces `MEDIA_MAX_BYTES`, and
 * tells the type from the bytes, which must fit the endpoint (an "image" must be an image).
 * A sticker that is not WebP already is converted to one (see media/stickers.ts).
 */
export interface MediaIntakeService {
  readonly accept: (
    kind: MediaKind,
    source: MediaSource
  ) => Effect.Effect<AcceptedMedia, ValidationFailed | PayloadTooLarge | UnsupportedMediaType>
}

export class MediaIntake extends Context.Tag("switchboard/MediaIntake")<MediaIntake, MediaIntakeService>() {
  static readonly layer = Layer.effect(MediaIntake, makeMediaIntake)
}
