import { Context, Data, Effect, Layer, Option, type Stream } from "effect"
import * as path from "node:path"
import type { Settings } from "../../domain/Settings.js"
import { makeLocalDiskMediaStore } from "./LocalDiskMediaStore.js"
import { makeS3MediaStore, parseS3Url, type S3MediaStoreOptions } from "./S3MediaStore.js"

/**
 * Where the bytes of media live: what was sent and what was received. Keys are relative paths
 * (`<sessionId>/<messageId>`); the metadata (mimetype, filename, size) lives with the message
 * in the Store. The backend is chosen by `MEDIA_URL`: local disk or S3 (or what speaks its API).
 */
export interface MediaStoreService {
  /** Writes the object whole: a reader never sees half of it. */
  readonly put: (key: string, data: Uint8Array) => Effect.Effect<void, MediaStoreError>
  readonly read: (key: string) => Effect.Effect<Option.Option<Uint8Array>, MediaStoreError>
  /**
   * The object's size, and its bytes as a stream that reads them only when run (a stream that
   * is never run holds nothing open). For large objects: nothing is held in memory whole.
   */
  readonly stream: (key: string) => Effect.Effect<Option.Option<MediaObject>, MediaStoreError>
  /** Idempotent: removing what is not there is no error. */
  readonly remove: (key: string) => Effect.Effect<void, MediaStoreError>
  /** Removes every object under `<prefix>/` (a deleted session's media). */
  readonly removeAll: (prefix: string) => Effect.Effect<void, MediaStoreError>
}

export interface MediaObject {
  readonly size: number
  readonly stream: Stream.Stream<Uint8Array, MediaStoreError>
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

  /** Media as objects in an S3 bucket; the client is closed with the layer. */
  static readonly s3 = (options: S3MediaStoreOptions) => Layer.scoped(MediaStore, Effect.suspend(() => makeS3MediaStore(options)))

  /**
   * The store named by `MEDIA_URL` (default: `<DATA_DIR>/media` on local disk):
   * `file:<dir>`, or `s3://bucket[/prefix]?region=…&endpoint=…&forcePathStyle=true` with the
   * credentials of the AWS SDK's default chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`,
   * profiles, instance roles…).
   */
  static readonly fromSettings = (settings: Settings) =>
    Layer.scoped(
      MediaStore,
      Effect.suspend(() => {
        const url = Option.getOrElse(settings.media.url, () => `file:${path.join(settings.dataDir, "media")}`)
        if (url.startsWith("file:")) return makeLocalDiskMediaStore(url.slice("file:".length))
        if (url.startsWith("s3:")) {
          const options = parseS3Url(url)
          return typeof options === "string" ? Effect.dieMessage(`MEDIA_URL: ${options}`) : makeS3MediaStore(options)
        }
        return Effect.dieMessage(`MEDIA_URL ${url.split(/[:?]/)[0]}:…: use file:<dir> or s3://bucket?region=…`)
      })
    )
}

/** Where a message's media is kept: under its session, so a deleted session takes it along. */
export const mediaKey = (sessionId: string, messageId: string) => `${sessionId}/${messageId}`
