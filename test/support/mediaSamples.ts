/**
 * Tiny files with the real signatures of their formats: enough for a sniffer to tell what they
 * are, not meant to be decoded. Each is unique (a trailing tag), so a test can tell them apart.
 */

const withTag = (head: ReadonlyArray<number> | Buffer, tag: string) => new Uint8Array(Buffer.concat([Buffer.from(head), Buffer.from(tag)]))

/** PNG signature and an IHDR chunk of a 1×1 image. */
export const png = (tag = "png") =>
  withTag([
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a,
    0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89
  ], tag)

/** JPEG SOI + JFIF APP0. */
export const jpeg = (tag = "jpeg") =>
  withTag([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00], tag)

/** An ISO-BMFF `ftyp` box with the given major brand (`isom` video, `M4A ` audio). */
const ftyp = (brand: string, tag: string) => {
  const box = Buffer.alloc(24)
  box.writeUInt32BE(24, 0)
  box.write("ftyp", 4, "latin1")
  box.write(brand, 8, "latin1")
  box.writeUInt32BE(0x200, 12)
  box.write(brand, 16, "latin1")
  box.write("mp41", 20, "latin1")
  return withTag(box, tag)
}

export const mp4 = (tag = "mp4") => ftyp("isom", tag)

/** An Ogg page carrying an OpusHead: what WhatsApp voice notes are. */
export const opus = (tag = "opus") => {
  const page = Buffer.alloc(28)
  page.write("OggS", 0, "latin1")
  page[5] = 0x02 // beginning of stream
  page[26] = 1 // one segment
  page[27] = 19 // of 19 bytes
  const head = Buffer.concat([Buffer.from("OpusHead", "latin1"), Buffer.from([1, 1, 0x38, 0x01, 0x80, 0xbb, 0, 0, 0, 0, 0])])
  return withTag(Buffer.concat([page, head]), tag)
}

export const pdf = (tag = "pdf") => withTag(Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "latin1"), tag)

export const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")
