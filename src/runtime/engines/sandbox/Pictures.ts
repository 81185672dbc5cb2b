import { randomBytes } from "node:crypto"
import { Effect, Option } from "effect"
import { MediaStore } from "../../ports/MediaStore.js"
import { EngineError } from "../../Engine.js"

/**
 * Profile and group pictures on the sandbox network: the JPEG goes to the media server (the
 * gateway's media store, under `sandbox-cdn/pictures/`) and is shown by a URL that changes with
 * every new picture, as WhatsApp's do. Anyone may fetch a URL; who may learn it is decided by
 * whoever hands it out.
 */

const urlPrefix = "sandbox://pictures/"

const keyOf = (url: string) => url.startsWith(urlPrefix) ? Option.some(`sandbox-cdn/pictures/${url.slice(urlPrefix.length)}`) : Option.none()

export const makePictures = Effect.gen(function*() {
  const store = yield* MediaStore
  const unavailable = (error: { readonly message: string }) =>
    new EngineError({ code: "MEDIA_SERVER_UNAVAILABLE", message: `sandbox: ${error.message}`, transient: true })
  const notFound = new EngineError({ code: "PICTURE_NOT_FOUND", message: "sandbox: no picture at that URL", transient: false, refusal: "not_found" })

  return {
    /** Puts a new picture of the owner (`…@c.us`, `…@g.us`) up; its URL. */
    upload: (ownerId: string, jpeg: Uint8Array) =>
      Effect.gen(function*() {
        const url = `${urlPrefix}${ownerId.replace(/@.*$/, "")}/${randomBytes(8).toString("hex")}.jpg`
        yield* store.put(Option.getOrThrow(keyOf(url)), jpeg).pipe(Effect.mapError(unavailable))
        return url
      }),
    download: (url: string) =>
      Option.match(keyOf(url), {
        onNone: () => Effect.fail(notFound),
        onSome: (key) =>
          store.read(key).pipe(
            Effect.mapError(unavailable),
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound), onSome: Effect.succeed }))
          )
      }),
    /** A replaced or removed picture is gone from the server. */
    remove: (url: string | null) =>
      url === null ? Effect.void : Option.match(keyOf(url), { onNone: () => Effect.void, onSome: (key) => Effect.ignore(store.remove(key)) })
  }
})

export type Pictures = Effect.Effect.Success<typeof makePictures>
