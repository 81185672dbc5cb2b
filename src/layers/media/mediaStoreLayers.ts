import { Effect, Layer, Option } from "effect"
import * as path from "node:path"
import type { Settings } from "../../domain/Settings.js"
import { MediaStore } from "../../runtime/ports/MediaStore.js"
import { makeLocalDiskMediaStore } from "./LocalDiskMediaStore.js"
import type { S3MediaStoreOptions } from "./S3MediaStore.js"

/** The AWS SDK is loaded only for a gateway that keeps its media in S3. */
const loadS3 = Effect.promise(() => import("./S3MediaStore.js"))

/** Media as files under `dir`. */
export const localDiskMediaStore = (dir: string) => Layer.effect(MediaStore, makeLocalDiskMediaStore(dir))

/** Media as objects in an S3 bucket; the client is closed with the layer. */
export const s3MediaStore = (options: S3MediaStoreOptions) => Layer.scoped(MediaStore, Effect.flatMap(loadS3, ({ makeS3MediaStore }) => makeS3MediaStore(options)))

/**
 * The store named by `MEDIA_URL` (default: `<DATA_DIR>/media` on local disk):
 * `file:<dir>`, or `s3://bucket[/prefix]?region=…&endpoint=…&forcePathStyle=true` with the
 * credentials of the AWS SDK's default chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`,
 * profiles, instance roles…).
 */
export const mediaStoreFromSettings = (settings: Settings) =>
  Layer.scoped(
    MediaStore,
    Effect.suspend(() => {
      const url = Option.getOrElse(settings.media.url, () => `file:${path.join(settings.dataDir, "media")}`)
      if (url.startsWith("file:")) return makeLocalDiskMediaStore(url.slice("file:".length))
      if (url.startsWith("s3:")) {
        return Effect.flatMap(loadS3, ({ makeS3MediaStore, parseS3Url }) => {
          const options = parseS3Url(url)
          return typeof options === "string" ? Effect.dieMessage(`MEDIA_URL: ${options}`) : makeS3MediaStore(options)
        })
      }
      return Effect.dieMessage(`MEDIA_URL ${url.split(/[:?]/)[0]}:…: use file:<dir> or s3://bucket?region=…`)
    })
  )
