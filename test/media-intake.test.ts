import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import sharp from "sharp"
import type { MediaKind } from "../src/domain/Message.js"
import { filenameFromContentDisposition } from "../src/runtime/network/contentDisposition.js"
import { cleanFilename } from "../src/services/media/filename.js"
import { acceptedTypes } from "../src/services/media/mediaTypes.js"
import { accept, bytes, files, refusal, wordprocessing } from "./support/mediaIntake.js"

/** Media given as bytes: what each endpoint takes, names, and the size cap. URLs: media-url-fetch.test.ts. */

describe("sniffing: each endpoint takes what WhatsApp takes, named by the bytes", () => {
  const cases: ReadonlyArray<readonly [MediaKind, keyof typeof files, string]> = [
    ["image", "jpeg", "image/jpeg"],
    ["image", "png", "image/png"],
    ["image", "webp", "image/webp"],
    ["video", "mp4", "video/mp4"],
    ["video", "m4v", "video/mp4"],
    ["video", "threeGp", "video/3gpp"],
    ["audio", "opus", "audio/ogg; codecs=opus"],
    ["audio", "mp3Id3", "audio/mpeg"],
    ["audio", "mp3Frames", "audio/mpeg"],
    ["audio", "m4a", "audio/mp4"],
    ["audio", "mp4SoundOnly", "audio/mp4"],
    ["audio", "aac", "audio/aac"],
    ["audio", "amr", "audio/amr"],
    ["document", "pdf", "application/pdf"],
    ["document", "docx", wordprocessing]
  ]
  for (const [kind, file, mimetype] of cases) {
    it.effect(`${kind} takes ${file} as ${mimetype}, whatever was declared`, () =>
      Effect.gen(function*() {
        const accepted = yield* accept(kind, { data: files[file], mimetype: "application/x-whatever", filename: `${file}.bin` })
        expect(accepted).toEqual({ data: files[file], mimetype, filename: `${file}.bin` })
      }))
  }
})

describe("bytes that do not fit the endpoint: 415, saying what was found and what is taken", () => {
  const cases: ReadonlyArray<readonly [Exclude<MediaKind, "document">, keyof typeof files, string | null]> = [
    ["video", "png", "image/png"],
    ["image", "pdf", "application/pdf"],
    ["audio", "noise", null],
    ["image", "csv", null],
    ["video", "quicktime", "video/quicktime"],
    ["video", "m4a", "audio/mp4"],
    ["video", "mp4SoundOnly", "audio/mp4"],
    ["audio", "mp4", "video/mp4"],
    ["audio", "vorbis", "audio/ogg"],
    ["audio", "wav", "audio/wav"]
  ]
  for (const [kind, file, detected] of cases) {
    it.effect(`${file} sent as ${kind}`, () =>
      Effect.gen(function*() {
        // Declared as just what the endpoint wants: the bytes win all the same.
        const error = yield* refusal(kind, { data: files[file], mimetype: acceptedTypes[kind][0] })
        expect(error).toMatchObject({ status: 415, code: "UNSUPPORTED_MEDIA_TYPE", details: { detected, accepted: acceptedTypes[kind] } })
        expect(error.message).toContain(detected ?? "no type we recognise")
        for (const type of acceptedTypes[kind]) expect(error.message).toContain(type)
      }))
  }
})

describe("documents take anything, named as exactly as the bytes allow", () => {
  const document = (data: Uint8Array, mimetype?: string, filename?: string) =>
    accept("document", { data, mimetype, filename }).pipe(Effect.map(({ mimetype, filename }) => ({ mimetype, filename })))

  it.effect("the sniffed type beats the declared one; without a name a document is file.<ext>", () =>
    Effect.gen(function*() {
      expect(yield* document(files.pdf, "text/plain")).toEqual({ mimetype: "application/pdf", filename: "file.pdf" })
      expect(yield* document(files.docx)).toEqual({ mimetype: wordprocessing, filename: "file.docx" })
      expect(yield* document(files.png, "application/pdf", "scan.pdf")).toEqual({ mimetype: "image/png", filename: "scan.pdf" })
    }))

  it.effect("text has no magic number: the declared type if well-formed, else the extension, else octet-stream", () =>
    Effect.gen(function*() {
      expect(yield* document(files.csv, "text/csv; charset=utf-8", "contacts.csv")).toEqual({ mimetype: "text/csv", filename: "contacts.csv" })
      expect(yield* document(files.csv, "TEXT/CSV")).toEqual({ mimetype: "text/csv", filename: "file.csv" })
      expect(yield* document(files.csv, undefined, "notes.md")).toEqual({ mimetype: "text/markdown", filename: "notes.md" })
      expect(yield* document(files.csv, "not a type", "data.JSON")).toEqual({ mimetype: "application/json", filename: "data.JSON" })
      expect(yield* document(files.csv, "text/csv\r\nx-injected: 1", "list.txt")).toEqual({ mimetype: "text/plain", filename: "list.txt" })
      expect(yield* document(files.csv, "application/octet-stream", "list.csv")).toEqual({ mimetype: "text/csv", filename: "list.csv" })
      expect(yield* document(files.noise)).toEqual({ mimetype: "application/octet-stream", filename: "file.bin" })
    }))

  it.effect("a bare container is named by the caller only with a format built on it", () =>
    Effect.gen(function*() {
      expect(yield* document(files.plainZip, wordprocessing)).toEqual({ mimetype: wordprocessing, filename: "file.docx" })
      expect(yield* document(files.plainZip, "application/pdf", "x.pdf")).toEqual({ mimetype: "application/zip", filename: "x.pdf" })
      expect(yield* document(files.cfb, undefined, "budget.xls")).toEqual({ mimetype: "application/vnd.ms-excel", filename: "budget.xls" })
      expect(yield* document(files.cfb)).toEqual({ mimetype: "application/x-cfb", filename: "file.cfb" })
    }))
})

describe("file names", () => {
  it("keep the last path component, without control characters, at most 255 characters", () => {
    expect(cleanFilename("../../etc/passwd")).toBe("passwd")
    expect(cleanFilename("C:\\Users\\ada\\photo.jpg")).toBe("photo.jpg")
    expect(cleanFilename(" in\u0000voi\nce\u007f.pdf ")).toBe("invoice.pdf")
    expect(cleanFilename("invoice\u202efdp.exe")).toBe("invoicefdp.exe")
    const long = cleanFilename(`${"a".repeat(300)}.pdf`)!
    expect(long).toHaveLength(255)
    expect(long.endsWith("a.pdf")).toBe(true)
    expect(Array.from(cleanFilename("😀".repeat(300))!)).toHaveLength(255)
    for (const nothing of [undefined, "", "   ", ".", "..", "dir/", "\u0000\u0001"]) expect(cleanFilename(nothing)).toBeNull()
  })

  it.effect("image, video and audio keep the caller's name or have none; a document always has one", () =>
    Effect.gen(function*() {
      expect((yield* accept("image", { data: files.png })).filename).toBeNull()
      expect((yield* accept("audio", { data: files.opus, filename: "voice/note.ogg" })).filename).toBe("note.ogg")
      expect((yield* accept("document", { data: files.pdf, filename: "../secret/report.pdf" })).filename).toBe("report.pdf")
      expect((yield* accept("document", { data: files.pdf, filename: "/" })).filename).toBe("file.pdf")
    }))

  it("Content-Disposition: filename* before filename, quoted or bare", () => {
    expect(filenameFromContentDisposition(`attachment; filename="a \\"b\\".pdf"`)).toBe(`a "b".pdf`)
    expect(filenameFromContentDisposition("attachment; filename=plain.txt")).toBe("plain.txt")
    expect(filenameFromContentDisposition(`attachment; filename="fallback.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`)).toBe("résumé.pdf")
    expect(filenameFromContentDisposition(`attachment; filename*=UTF-8''%E0%A4%A.pdf; filename="ok.pdf"`)).toBe("ok.pdf")
    expect(filenameFromContentDisposition("inline")).toBeUndefined()
    expect(filenameFromContentDisposition(null)).toBeUndefined()
  })
})

describe("the size cap (MEDIA_MAX_BYTES) and empty media", () => {
  it.effect("exactly maxBytes is taken; one byte more is 413, stating the limit", () =>
    Effect.gen(function*() {
      const maxBytes = files.png.byteLength
      expect((yield* accept("image", { data: files.png }, { maxBytes })).mimetype).toBe("image/png")
      const error = yield* refusal("image", { data: bytes(files.png, [0]) }, { maxBytes })
      expect(error).toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE", details: { maxBytes } })
      expect(error.message).toContain(String(maxBytes))
    }))

  it.effect("empty media is 400 VALIDATION_FAILED", () =>
    Effect.gen(function*() {
      const error = yield* refusal("document", { data: new Uint8Array(0), filename: "empty.txt" })
      expect(error).toMatchObject({ status: 400, code: "VALIDATION_FAILED" })
    }))
})


describe("stickers: WebP as it is, PNG/JPEG/GIF converted to a 512×512 WebP", () => {
  /** A real image (the magic-number fixtures above have no pixels sharp could decode). */
  const image = (format: "png" | "jpeg", width: number, height: number) =>
    Effect.promise(() =>
      sharp({ create: { width, height, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 1 } } }).toFormat(format).toBuffer())
  const animatedGif = (frames: number) => {
    const [width, height] = [40, 20]
    // Frames that differ, or the encoder would merge them into one.
    const pixels = Buffer.alloc(width * height * frames * 4, 255)
    for (let frame = 0; frame < frames; frame++) pixels.fill(frame * 80, frame * width * height * 4, (frame + 1) * width * height * 4 - 1)
    return Effect.promise(() =>
      sharp(pixels, { raw: { width, height: height * frames, channels: 4, pageHeight: height } }).gif({ loop: 0 }).toBuffer())
  }
  const metadataOf = (data: Uint8Array) => Effect.promise(() => sharp(data, { animated: true }).metadata())

  for (const format of ["png", "jpeg"] as const) {
    it.effect(`a ${format} becomes image/webp, 512×512, the whole picture fitted in`, () =>
      Effect.gen(function*() {
        const accepted = yield* accept("sticker", { data: yield* image(format, 300, 150), filename: `cat.${format}` })
        expect(accepted.mimetype).toBe("image/webp")
        expect(accepted.filename).toBe("cat.webp")
        const metadata = yield* metadataOf(accepted.data)
        expect({ format: metadata.format, width: metadata.width, height: metadata.height }).toEqual({ format: "webp", width: 512, height: 512 })
        // Fitted whole: a wide picture leaves transparent bands above and below it.
        expect(metadata.hasAlpha).toBe(true)
        const corner = yield* Effect.promise(() => sharp(accepted.data).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer())
        expect(corner[3]).toBe(0)
      }))
  }

  it.effect("an animated GIF becomes an animated WebP with every frame", () =>
    Effect.gen(function*() {
      const accepted = yield* accept("sticker", { data: yield* animatedGif(3) })
      const metadata = yield* metadataOf(accepted.data)
      expect(accepted.mimetype).toBe("image/webp")
      expect({ format: metadata.format, pages: metadata.pages, width: metadata.width, pageHeight: metadata.pageHeight })
        .toEqual({ format: "webp", pages: 3, width: 512, pageHeight: 512 })
    }))

  it.effect("a WebP goes untouched, byte for byte", () =>
    Effect.gen(function*() {
      const webp = yield* Effect.promise(() => sharp({ create: { width: 64, height: 64, channels: 4, background: "#0f0" } }).webp().toBuffer())
      const accepted = yield* accept("sticker", { data: webp, filename: "ok.webp" })
      expect(accepted).toEqual({ data: webp, mimetype: "image/webp", filename: "ok.webp" })
    }))

  it.effect("text is refused 415; a PNG whose pixels cannot be decoded too", () =>
    Effect.gen(function*() {
      const text = yield* refusal("sticker", { data: files.csv, mimetype: "image/png" })
      expect(text).toMatchObject({ status: 415, code: "UNSUPPORTED_MEDIA_TYPE", details: { detected: null, accepted: acceptedTypes.sticker } })
      const corrupt = yield* refusal("sticker", { data: files.png })
      expect(corrupt).toMatchObject({ status: 415, code: "UNSUPPORTED_MEDIA_TYPE", details: { detected: "image/png" } })
    }))
})
