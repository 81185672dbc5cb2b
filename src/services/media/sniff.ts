import { Effect } from "effect"
import { loadFileType } from "../../runtime/lazyLibraries.js"

/** What the bytes are, by their magic numbers. */
export interface SniffedType {
  readonly mime: string
  readonly ext: string
}

const audioMp4: SniffedType = { mime: "audio/mp4", ext: "m4a" }

// Names file-type gives that WhatsApp knows by another.
const canonicalNames: Readonly<Record<string, SniffedType>> = {
  "audio/x-m4a": audioMp4,
  "video/x-m4v": { mime: "video/mp4", ext: "m4v" }
}

/**
 * The handler types of the tracks of ISO media (`vide`, `soun`, …). Each track has an `hdlr`
 * box: size, "hdlr", version and flags, 4 bytes pre_defined, then the handler type. The `moov`
 * box holding them may sit at either end of the file, so the whole of it is searched.
 */
const isoTrackHandlers = (data: Uint8Array): ReadonlySet<string> => {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const handlers = new Set<string>()
  for (let at = bytes.indexOf("hdlr"); at !== -1; at = bytes.indexOf("hdlr", at + 4)) {
    handlers.add(bytes.toString("latin1", at + 12, at + 16))
  }
  return handlers
}

/**
 * file-type names ISO media (the MP4 family) by the major brand of its `ftyp` box: `M4A ` is
 * audio, but the generic brands (`isom`, `mp42`, …) come out as video/mp4 even when the file
 * holds sound only, as ffmpeg writes audio-only .mp4 and many .m4a. The tracks tell: sound and
 * no video is audio/mp4. (Brand-named audio, `M4A `/`M4B `, stays audio even with a cover track.)
 */
const refineIsoMedia = (type: SniffedType, data: Uint8Array): SniffedType => {
  if (type.mime !== "video/mp4") return type
  const handlers = isoTrackHandlers(data)
  return handlers.has("soun") && !handlers.has("vide") ? audioMp4 : type
}

/** What the bytes are; `undefined` for what has no magic number (text) or none we know. */
export const sniff = (data: Uint8Array): Effect.Effect<SniffedType | undefined> =>
  // The sniffer not loading is the installation's fault, not the bytes': a defect, not "unknown".
  Effect.flatMap(Effect.promise(loadFileType), (fileType) => Effect.tryPromise(() => fileType.fileTypeFromBuffer(data))).pipe(
    // A malformed container that trips the sniffer up is as unknown as random bytes.
    Effect.orElseSucceed(() => undefined),
    Effect.map((found) => {
      if (found === undefined) return undefined
      const type = canonicalNames[found.mime] ?? { mime: found.mime, ext: found.ext }
      return refineIsoMedia(type, data)
    })
  )
