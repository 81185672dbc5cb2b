/**
 * Shared by the media intake suites: tiny files with real magic numbers, the intake built from
 * settings, errors as the API shows them, and a loopback HTTP server that records what it saw.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { crc32 } from "node:zlib"
import { defaultSettings } from "../../src/app/Config.js"
import { AppSettings, type MediaSettings } from "../../src/domain/Settings.js"
import { PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "../../src/domain/Errors.js"
import type { MediaKind, MediaSource } from "../../src/domain/Message.js"
import { makeMediaIntake } from "../../src/services/media/intake.js"

// ---------------------------------------------------------------------------------------------
// Tiny files with real magic numbers

export type Part = string | ReadonlyArray<number> | Uint8Array
export const bytes = (...parts: ReadonlyArray<Part>): Uint8Array =>
  new Uint8Array(Buffer.concat(parts.map((part) => typeof part === "string" ? Buffer.from(part, "latin1") : Buffer.from(part))))
export const zeros = (n: number) => new Uint8Array(n)
export const u32be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
export const u32le = (n: number) => [...u32be(n)].reverse()
export const u16le = (n: number) => [n & 255, (n >>> 8) & 255]

/** An ISO media box: size, type, content. */
export const box = (type: string, ...content: ReadonlyArray<Part>) => {
  const body = bytes(...content)
  return bytes(u32be(8 + body.byteLength), type, body)
}
export const ftyp = (major: string, ...compatible: ReadonlyArray<string>) => box("ftyp", major, u32be(0), ...compatible)
export const track = (handler: "vide" | "soun") =>
  box("trak", box("mdia", box("hdlr", u32be(0), u32be(0), handler, zeros(12), "Handler\0")))
export const isoMedia = (major: string, ...handlers: ReadonlyArray<"vide" | "soun">) =>
  bytes(ftyp(major, major, "isom"), box("moov", ...handlers.map(track)), box("mdat", zeros(64)))

export const pngChunk = (type: string, data: Part) => {
  const body = bytes(data)
  return bytes(u32be(body.byteLength), type, body, u32be(crc32(bytes(type, body))))
}
/** A stored (uncompressed) ZIP archive, central directory and all, as Office writes .docx. */
export const zip = (entries: Readonly<Record<string, string>>) => {
  const locals: Array<Uint8Array> = []
  const centrals: Array<Uint8Array> = []
  let offset = 0
  for (const [name, text] of Object.entries(entries)) {
    const data = Buffer.from(text)
    const common = [...u16le(0), ...u16le(0), ...u16le(0), ...u16le(0), ...u32le(crc32(data)), ...u32le(data.length), ...u32le(data.length), ...u16le(name.length), ...u16le(0)]
    const local = bytes([0x50, 0x4b, 0x03, 0x04], u16le(20), common, name, data)
    centrals.push(bytes([0x50, 0x4b, 0x01, 0x02], u16le(20), u16le(20), common, u16le(0), u16le(0), u16le(0), u32le(0), u32le(offset), name))
    locals.push(local)
    offset += local.byteLength
  }
  const directory = bytes(...centrals)
  const count = Object.keys(entries).length
  const end = bytes([0x50, 0x4b, 0x05, 0x06], u16le(0), u16le(0), u16le(count), u16le(count), u32le(directory.byteLength), u32le(offset), u16le(0))
  return bytes(...locals, directory, end)
}

export const wordprocessing = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
export const files = {
  jpeg: bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10], "JFIF\0", [1, 1, 0, 0, 1, 0, 1, 0, 0], zeros(32), [0xff, 0xd9]),
  png: bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], pngChunk("IHDR", bytes(u32be(1), u32be(1), [8, 6, 0, 0, 0])), pngChunk("IDAT", zeros(12)), pngChunk("IEND", [])),
  webp: bytes("RIFF", u32le(30), "WEBP", "VP8L", u32le(10), [0x2f], zeros(9)),
  mp4: isoMedia("isom", "vide", "soun"),
  mp4SoundOnly: isoMedia("isom", "soun"),
  m4v: isoMedia("M4V ", "vide"),
  threeGp: isoMedia("3gp4", "vide"),
  m4a: isoMedia("M4A ", "soun"),
  quicktime: isoMedia("qt  ", "vide"),
  opus: bytes("OggS", [0, 2], zeros(8), u32le(1), u32le(0), u32le(0), [1, 19], "OpusHead", [1, 2, 0x38, 0x01, 0x80, 0xbb, 0, 0, 0, 0, 0], zeros(32)),
  vorbis: bytes("OggS", [0, 2], zeros(8), u32le(1), u32le(0), u32le(0), [1, 30], [1], "vorbis", zeros(40)),
  mp3Id3: bytes("ID3", [3, 0, 0, 0, 0, 0, 0], [0xff, 0xfb, 0x90, 0x00], zeros(413)),
  mp3Frames: bytes([0xff, 0xfb, 0x90, 0x00], zeros(413), [0xff, 0xfb, 0x90, 0x00], zeros(413)),
  aac: bytes([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc], zeros(64)),
  amr: bytes("#!AMR\n", zeros(32)),
  wav: bytes("RIFF", u32le(36), "WAVE", "fmt ", u32le(16), u16le(1), u16le(1), u32le(8000), u32le(16000), u16le(2), u16le(16), "data", u32le(0)),
  pdf: bytes("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"),
  docx: zip({
    "[Content_Types].xml":
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="${wordprocessing}.main+xml"/></Types>`,
    "word/document.xml": `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>`
  }),
  plainZip: zip({ "notes.txt": "hello" }),
  cfb: bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], zeros(504)),
  csv: bytes("name,phone\nAda,15551234567\n"),
  // No magic number in it: a fixed, noisy pattern.
  noise: Uint8Array.from({ length: 256 }, (_, i) => (i * 151 + 7) % 241 + 3)
}

// ---------------------------------------------------------------------------------------------
// Harness

export const intakeWith = (media: Partial<MediaSettings> = {}) =>
  Effect.gen(function*() {
    const defaults = yield* defaultSettings()
    const settings = yield* defaultSettings({ media: { ...defaults.media, ...media } })
    return yield* makeMediaIntake.pipe(Effect.provide(AppSettings.layer(settings)))
  })

export const accept = (kind: MediaKind, source: MediaSource, media: Partial<MediaSettings> = {}) =>
  Effect.flatMap(intakeWith(media), (intake) => intake.accept(kind, source))

export const errorClasses = { ValidationFailed, PayloadTooLarge, UnsupportedMediaType }

/** An error as the API shows it, with the HTTP status of its class. */
export const shown = (error: ValidationFailed | PayloadTooLarge | UnsupportedMediaType) => ({
  status: errorClasses[error._tag].status,
  code: error.code,
  message: error.message,
  details: error.details
})

export const refusal = (kind: MediaKind, source: MediaSource, media: Partial<MediaSettings> = {}) =>
  Effect.map(Effect.flip(accept(kind, source, media)), shown)

/** Neither the message nor the details of an error carry the URL's userinfo or query. */
export const expectNoSecrets = (error: { readonly message: string; readonly details?: unknown }) => {
  const shown = JSON.stringify({ message: error.message, details: error.details })
  for (const secret of ["user", "secret", "token", "abc", "?", "/x"]) expect(shown).not.toContain(secret)
}

// ---------------------------------------------------------------------------------------------
// A loopback HTTP server per test

export type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void

export interface Seen {
  readonly requests: Array<{ readonly path: string; readonly query: string; readonly headers: http.IncomingHttpHeaders }>
  connections: number
  /** Responses whose connection closed before the server finished them. */
  aborted: number
}

export const serve = (routes: Readonly<Record<string, Route>>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: http.Server; readonly seen: Seen }>((resume) => {
      const seen: Seen = { requests: [], connections: 0, aborted: 0 }
      const server = http.createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://test")
        seen.requests.push({ path: url.pathname, query: url.search, headers: request.headers })
        response.on("close", () => {
          if (!response.writableFinished) seen.aborted++
        })
        const route = routes[url.pathname] ?? ((_, response) => response.writeHead(404).end("not found"))
        route(request, response)
      })
      server.on("connection", () => void seen.connections++)
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, seen })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ server, seen }) => {
    const port = (server.address() as AddressInfo).port
    return { port, base: `http://127.0.0.1:${port}`, seen }
  }))

export const send = (data: Uint8Array, headers: http.OutgoingHttpHeaders = {}): Route => (_, response) =>
  response.writeHead(200, { "content-length": data.byteLength, ...headers }).end(data)
/** Without Content-Length: Node sends it chunked. */
export const sendChunked = (data: Uint8Array, headers: http.OutgoingHttpHeaders = {}): Route => (_, response) => {
  response.writeHead(200, headers).write(data.subarray(0, 10))
  setTimeout(() => response.end(data.subarray(10)), 20)
}
export const redirect = (location: string, status = 302): Route => (_, response) => response.writeHead(status, { location }).end()
export const hang: Route = () => undefined
/** A PNG that never ends: a chunk every few milliseconds until the connection closes. */
export const endless = (chunk: Uint8Array, headers: http.OutgoingHttpHeaders = {}): Route => (_, response) => {
  response.writeHead(200, headers).write(files.png)
  const timer = setInterval(() => response.write(chunk), 5)
  response.on("close", () => clearInterval(timer))
}

export const eventually = (check: () => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 100 && !check(); attempt++) yield* Effect.sleep("20 millis")
    expect(check()).toBe(true)
  })

export const allowPrivate = { allowPrivate: true }

