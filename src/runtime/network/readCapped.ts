import { Data, Effect } from "effect"
import type { ReadableStream } from "node:stream/web"

/** The body went past the cap; reading stopped there. */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge") {}

/** The connection broke while the body was being read. */
export class BodyReadFailed extends Data.TaggedError("BodyReadFailed")<{ readonly cause: unknown }> {}

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number) => {
  const data = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    data.set(chunk, offset)
    offset += chunk.byteLength
  }
  return data
}

/**
 * Reads a body whole, but never more than `maxBytes` of it: the chunk that goes past the cap
 * ends the read (holding at most `maxBytes` + that chunk), and the stream is cancelled, which
 * closes the connection rather than downloading the rest. Cancelled as well when interrupted.
 * Past the cap the read fails, or, with `truncate`, gives the first `maxBytes` (a web page's
 * head is all a link preview needs).
 */
export const readCapped = (
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  truncate = false
): Effect.Effect<Uint8Array, BodyTooLarge | BodyReadFailed> =>
  body === null
    ? Effect.succeed(new Uint8Array(0))
    : Effect.acquireUseRelease(
      Effect.sync(() => body.getReader()),
      (reader) =>
        Effect.gen(function*() {
          const chunks: Array<Uint8Array> = []
          let size = 0
          for (;;) {
            const next = yield* Effect.tryPromise({ try: () => reader.read(), catch: (cause) => new BodyReadFailed({ cause }) })
            if (next.done) return concat(chunks, size)
            if (size + next.value.byteLength > maxBytes) {
              if (!truncate) return yield* new BodyTooLarge()
              chunks.push(next.value.subarray(0, maxBytes - size))
              return concat(chunks, maxBytes)
            }
            size += next.value.byteLength
            chunks.push(next.value)
          }
        }),
      // A no-op once the body was read to its end; a pending read settles when cancelled.
      (reader) => Effect.sync(() => void reader.cancel().catch(() => undefined))
    )
