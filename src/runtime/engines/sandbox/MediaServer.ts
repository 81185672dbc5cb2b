import { Effect, Option } from "effect"
import { MediaStore } from "../../ports/MediaStore.js"
import { EngineError, type InboundMedia, type OutboundMedia } from "../../Engine.js"

/**
 * The sandbox's stand-in for WhatsApp's media servers: a sender uploads the bytes, the message
 * carries a reference, and each recipient downloads them. The blobs live in the gateway's own
 * media store under `sandbox-cdn/`, so they survive restarts like the rest of the network's memory.
 */
export interface SandboxMediaRef {
  readonly cdnKey: string
}

const cdnKeyOf = (engineMessageId: string) => `sandbox-cdn/${engineMessageId}`

const isRef = (ref: unknown): ref is SandboxMediaRef =>
  typeof ref === "object" && ref !== null && typeof (ref as SandboxMediaRef).cdnKey === "string"

export const makeMediaServer = Effect.gen(function*() {
  const store = yield* MediaStore
  const unavailable = (error: { readonly message: string }) =>
    new EngineError({ code: "MEDIA_SERVER_UNAVAILABLE", message: `sandbox: ${error.message}`, transient: true })

  return {
    /** Uploads the media of a message about to be sent; a resend uploads the same key again. */
    upload: (engineMessageId: string, media: OutboundMedia) =>
      store.put(cdnKeyOf(engineMessageId), media.data).pipe(
        Effect.mapError(unavailable),
        Effect.as({
          mimetype: media.mimetype,
          filename: media.filename,
          size: media.data.length,
          ptt: media.ptt,
          ref: { cdnKey: cdnKeyOf(engineMessageId) } satisfies SandboxMediaRef
        } satisfies InboundMedia)
      ),
    download: (media: InboundMedia) =>
      Effect.gen(function*() {
        if (!isRef(media.ref)) {
          return yield* new EngineError({ code: "MEDIA_NOT_FOUND", message: "sandbox: not a sandbox media reference", transient: false })
        }
        const data = yield* store.read(media.ref.cdnKey).pipe(Effect.mapError(unavailable))
        return yield* Option.match(data, {
          onNone: () => Effect.fail(new EngineError({ code: "MEDIA_NOT_FOUND", message: "sandbox: the media is gone from the media server", transient: false })),
          onSome: Effect.succeed
        })
      }),
    /** A deleted session's uploads go with it. */
    remove: (engineMessageIds: ReadonlyArray<string>) =>
      Effect.forEach(engineMessageIds, (id) => Effect.ignore(store.remove(cdnKeyOf(id))), { discard: true })
  }
})

export type MediaServer = Effect.Effect.Success<typeof makeMediaServer>
