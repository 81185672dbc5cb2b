import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { MediaStoreError, type MediaStoreService } from "./MediaStore.js"

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
      remove: (key) => attempt("remove", key, () => fs.rm(fileOf(key), { force: true })),
      removeAll: (prefix) => attempt("removeAll", prefix, () => fs.rm(fileOf(prefix), { recursive: true, force: true }))
    }
  })
