/**
 * WhatsApp media end to end: a phone encrypts the file with a fresh 32-byte media key, uploads
 * the ciphertext, and sends the key, hashes and location inside the Signal-encrypted message.
 *
 * Cipher (what Baileys' `encryptedStream` does): HKDF-SHA256(mediaKey, info "WhatsApp <Kind> Keys")
 * → 112 bytes = iv(16) ‖ cipherKey(32) ‖ macKey(32) ‖ unused; the blob is
 * AES-256-CBC(plain) ‖ HMAC-SHA256(macKey, iv ‖ ciphertext)[0..10]; fileSha256 hashes the
 * plaintext, fileEncSha256 the whole blob. A ptt is an audioMessage (same "Audio" keys) with ptt.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { getMediaKeys, proto } from "@whiskeysockets/baileys"

export type MediaKind = "image" | "video" | "audio" | "document" | "sticker"

/** What a fake contact sends with `contact.sendMedia`. */
export interface OutgoingMedia {
  readonly kind: MediaKind
  readonly bytes: Uint8Array
  readonly mimetype: string
  /** documents: shown name (default "file") */
  readonly fileName?: string
  /** image / video / document */
  readonly caption?: string
  /** audio: a voice note */
  readonly ptt?: boolean
  /** audio / video duration */
  readonly seconds?: number
  /** stickers: an animated WebP */
  readonly animated?: boolean
}

/** A media message's plaintext and the fields a gateway shows with it. */
export interface DownloadedMedia {
  readonly kind: MediaKind
  readonly bytes: Buffer
  readonly mimetype: string | undefined
  readonly fileName: string | undefined
  readonly caption: string | undefined
  readonly ptt: boolean
}

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part)
  return hash.digest()
}

const KINDS: readonly MediaKind[] = ["image", "video", "audio", "document", "sticker"]

/** The upload path a kind goes to (stickers live with images: `/mms/image`). */
export const uploadType = (kind: MediaKind): string => (kind === "sticker" ? "image" : kind)

/** iv, cipherKey and macKey from a media key (Baileys' HKDF expansion). */
const keysOf = async (mediaKey: Uint8Array, kind: MediaKind) => {
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, kind)
  if (!macKey) throw new Error("getMediaKeys gave no macKey")
  return { iv, cipherKey, macKey }
}

/** Encrypt `plain` as a phone does before uploading. */
export const encryptMedia = async (plain: Uint8Array, kind: MediaKind) => {
  const mediaKey = randomBytes(32)
  const { iv, cipherKey, macKey } = await keysOf(mediaKey, kind)
  const aes = createCipheriv("aes-256-cbc", cipherKey, iv)
  const ciphertext = Buffer.concat([aes.update(plain), aes.final()])
  const mac = createHmac("sha256", macKey).update(iv).update(ciphertext).digest().subarray(0, 10)
  const encrypted = Buffer.concat([ciphertext, mac])
  return { mediaKey, encrypted, fileSha256: sha256(plain), fileEncSha256: sha256(encrypted), fileLength: plain.length }
}

/** Check and decrypt a downloaded blob against the message's key and hashes (stricter than
 *  Baileys' download, which checks neither the MAC nor the hashes). */
export const decryptMedia = async (
  encrypted: Buffer,
  kind: MediaKind,
  fields: { mediaKey?: Uint8Array | null; fileEncSha256?: Uint8Array | null; fileSha256?: Uint8Array | null }
): Promise<Buffer> => {
  if (!fields.mediaKey) throw new Error(`${kind}Message without mediaKey`)
  if (fields.fileEncSha256 && !sha256(encrypted).equals(Buffer.from(fields.fileEncSha256))) throw new Error("fileEncSha256 does not match the blob")
  const { iv, cipherKey, macKey } = await keysOf(fields.mediaKey, kind)
  const ciphertext = encrypted.subarray(0, -10)
  const mac = createHmac("sha256", macKey).update(iv).update(ciphertext).digest().subarray(0, 10)
  if (!timingSafeEqual(mac, encrypted.subarray(-10))) throw new Error("media MAC does not verify")
  const aes = createDecipheriv("aes-256-cbc", cipherKey, iv)
  const plain = Buffer.concat([aes.update(ciphertext), aes.final()])
  if (fields.fileSha256 && !sha256(plain).equals(Buffer.from(fields.fileSha256))) throw new Error("fileSha256 does not match the plaintext")
  return plain
}

/** The media kind of a message, looking through ephemeral / view-once / document-with-caption wrappers. */
export const mediaOf = (message: proto.IMessage | null | undefined): { kind: MediaKind; fields: MediaFields } | undefined => {
  const inner = unwrap(message)
  for (const kind of KINDS) {
    const fields = inner?.[`${kind}Message`]
    if (fields) return { kind, fields }
  }
  return undefined
}

type MediaFields = proto.Message.IImageMessage &
  proto.Message.IVideoMessage &
  proto.Message.IAudioMessage &
  proto.Message.IDocumentMessage &
  proto.Message.IStickerMessage

const unwrap = (message: proto.IMessage | null | undefined): Partial<Record<`${MediaKind}Message`, MediaFields | null>> | undefined => {
  const wrapped =
    message?.ephemeralMessage?.message ??
    message?.viewOnceMessage?.message ??
    message?.viewOnceMessageV2?.message ??
    message?.documentWithCaptionMessage?.message
  return wrapped ? unwrap(wrapped) : (message as Partial<Record<`${MediaKind}Message`, MediaFields | null>> | null | undefined) ?? undefined
}

/** Fetch (via `blob`) and decrypt the media of `message`. */
export const readMedia = async (message: proto.IMessage, blob: (urlOrPath: string) => Buffer | undefined): Promise<DownloadedMedia> => {
  const media = mediaOf(message)
  if (!media) throw new Error("not a media message")
  const { kind, fields } = media
  const location = fields.directPath ?? fields.url
  const encrypted = location ? blob(location) : undefined
  if (!encrypted) throw new Error(`the media server has no blob at ${location ?? "(no url / directPath)"}`)
  return {
    kind,
    bytes: await decryptMedia(encrypted, kind, fields),
    mimetype: fields.mimetype ?? undefined,
    fileName: fields.fileName ?? undefined,
    caption: fields.caption ?? undefined,
    ptt: fields.ptt === true
  }
}

/** Encrypt and store `media`, and build the `proto.IMessage` a phone sends for it. */
export const mediaMessage = async (
  media: OutgoingMedia,
  store: (uploadType: string, encrypted: Buffer) => { url: string; directPath: string }
): Promise<proto.IMessage> => {
  const { encrypted, ...keys } = await encryptMedia(media.bytes, media.kind)
  const { url, directPath } = store(uploadType(media.kind), encrypted)
  const common = { url, directPath, ...keys, mimetype: media.mimetype, mediaKeyTimestamp: Math.floor(Date.now() / 1000) }
  const caption = media.caption !== undefined ? { caption: media.caption } : {}
  const seconds = media.seconds !== undefined ? { seconds: media.seconds } : {}
  switch (media.kind) {
    case "image":
      return { imageMessage: { ...common, ...caption } }
    case "video":
      return { videoMessage: { ...common, ...caption, ...seconds } }
    case "audio":
      return { audioMessage: { ...common, ...seconds, ptt: media.ptt === true } }
    case "sticker":
      // WhatsApp's stickers are 512×512 WebPs
      return { stickerMessage: { ...common, width: 512, height: 512, isAnimated: media.animated === true } }
    case "document": {
      const fileName = media.fileName ?? "file"
      return { documentMessage: { ...common, ...caption, fileName, title: fileName } }
    }
  }
}
