import { Context, Data, type Effect, type Option, type Stream } from "effect"

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

export class MediaStore extends Context.Tag("switchboard/MediaStore")<MediaStore, MediaStoreService>() {}

/** Where a message's media is kept: under its session, so a deleted session takes it along. */
export const mediaKey = (sessionId: string, messageId: string) => `${sessionId}/${messageId}`
