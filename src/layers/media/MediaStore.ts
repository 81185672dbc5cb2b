import { Context, Data, Effect, Layer, Option } from "effect"
import * as path from "node:path"
import type { Settings } from "../Config.js"
import { makeLocalDiskMediaStore } from "./LocalDiskMediaStore.js"

/**
 * Where the bytes of media live: what was sent and what was received. Keys are relative paths
 * (`<sessionId>/<messageId>`); the metadata (mimetype, filename, size) lives with the message
 * in the Store. The backend is chosen by `MEDIA_URL`.
 */
export interface MediaStoreService {
  /** Writes the object whole: a reader never sees half of it. */
  readonly put: (key: string, data: Uint8Array) => Effect.Effect<void, MediaStoreError>
  readonly read: (key: string) => Effect.Effect<Option.Option<Uint8Array>, MediaStoreError>
  /** Idempotent: removing what is not there is no error. */
  readonly remove: (key: string) => Effect.Effect<void, MediaStoreError>
  /** Removes every object under `<prefix>/` (a deleted session's media). */
  readonly removeAll: (prefix: string) => Effect.Effect<void, MediaStoreError>
}

export class MediaStoreError extends Data.TaggedError("MediaStoreError")<{
  readonly operation: string
  readonly key: string
  readonly cause: unknown
}> {
  override get message() {
    return `media store: ${this.operation} ${this.key} failed`
  }
}

export class MediaStore extends Context.Tag("switchboard/MediaStore")<MediaStore, MediaStoreService>() {
  /** Media as files under `dir`. */
  static readonly localDisk = (dir: string) => Layer.effect(MediaStore, makeLocalDiskMediaStore(dir))

  /** The store named by `MEDIA_URL` (default: `<DATA_DIR>/media` on local disk). */
  static readonly fromSettings = (settings: Settings) =>
    Layer.effect(
      MediaStore,
      Effect.suspend(() => {
        const url = Option.getOrElse(settings.media.url, () => `file:${path.join(settings.dataDir, "media")}`)
        return url.startsWith("file:")
          ? makeLocalDiskMediaStore(url.slice("file:".length))
          : Effect.dieMessage(`MEDIA_URL ${url.split("?")[0]}: only file:<dir> is supported in this version`)
      })
    )
}

/** Where a message's media is kept: under its session, so a deleted session takes it along. */
export const mediaKey = (sessionId: string, messageId: string) => `${sessionId}/${messageId}`
