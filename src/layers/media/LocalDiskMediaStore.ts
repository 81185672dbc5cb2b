import { NodeStream } from "@effect/platform-node"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { MediaStoreError, type MediaStoreService } from "../../runtime/ports/MediaStore.js"

/**
 * Media as files under one directory. A put writes a temporary file and renames it into place,
 * so a crash mid-write leaves no truncated object behind.
 */
export const makeLocalDiskMediaStore = (root: string): Effect.Effect<MediaStoreService> =>
  Effect.gen(function*() {
    const base = path.resolve(root)
    yield* Effect.promise(() => fs.mkdir(base, { recursive: true }))

    const fileOf = (key: string) => {
      const file = path.resolve(base, key)
      if (!file.startsWith(base + path.sep)) throw new Error(`media key ${key} leaves the media directory`)
      return file
    }

    const attempt = <A>(operation: string, key: string, run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (cause) => new MediaStoreError({ operation, key, cause }) })

    return {
      put: (key, data) =>
        attempt("put", key, async () => {
          const file = fileOf(key)
          await fs.mkdir(path.dirname(file), { recursive: true })
          const partial = `${file}.${randomUUID()}.partial`
          await fs.writeFile(partial, data)
          await fs.rename(partial, file)
        }),
      read: (key) =>
        attempt("read", key, async () => {
          try {
            return Option.some(new Uint8Array(await fs.readFile(fileOf(key))))
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") return Option.none()
            throw error
          }
        }),
      stream: (key) =>
        attempt("stream", key, async () => {
          const file = fileOf(key)
          const stats = await fs.stat(file).catch((error: NodeJS.ErrnoException) => {
            if (error.code === "ENOENT") return undefined
            throw error
          })
          if (stats === undefined || !stats.isFile()) return Option.none()
          // opened when the stream runs: a put renames a whole file into place, so it reads
          // either the old object or the new one, never half of one
          return Option.some({
            size: stats.size,
            stream: NodeStream.fromReadable<MediaStoreError, Uint8Array>(
              () => createReadStream(file),
              (cause) => new MediaStoreError({ operation: "stream", key, cause })
            )
          })
        }),
      remove: (key) => attempt("remove", key, () => fs.rm(fileOf(key), { force: true })),
      removeAll: (prefix) => attempt("removeAll", prefix, () => fs.rm(fileOf(prefix), { recursive: true, force: true }))
    }
  })
