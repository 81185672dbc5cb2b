/**
 * The peer's media server (WhatsApp's `mmg.whatsapp.net`): HTTPS on loopback with a fixed,
 * test-only certificate, an in-memory store of encrypted blobs, and the `media_conn` answer that
 * points Baileys at it.
 *
 * The certificate (media-tls.*.pem, for 127.0.0.1 only, valid 100 years) was made once with
 *   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -days 36500 -nodes \
 *     -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1
 * Clients trust it through `peer.mediaCa`, never by switching verification off.
 *
 * Wire facts (Baileys rc14, lib/Utils/messages-media.js):
 * - upload: `POST https://<host>/mms/<type>/<fileEncSha256, base64url>?auth=<media_conn auth>&token=<same hash>`
 *   with the encrypted file as the body (node `https.request`, agent = `fetchAgent`); the answer
 *   is JSON `{ url, direct_path }`, anything without them counts as a failed upload.
 * - download: `GET https://<host of url><directPath>` (global fetch, dispatcher = `options.dispatcher`
 *   of the download call), with `Range: bytes=a-b` only for partial downloads; 404/410 make
 *   `downloadMediaMessage` ask the phone for a re-upload (when given a `reuploadRequest`).
 */
import { createHash, randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { BinaryNode } from "@whiskeysockets/baileys"

const pem = (name: string): string => readFileSync(new URL(`./media-tls.${name}.pem`, import.meta.url), "utf8")

/** Largest upload the server takes (announced in `media_conn`). */
const MAX_UPLOAD_BYTES = 64 * 1024 * 1024

/** WhatsApp's CDN folders per upload path (cosmetic, but it makes direct paths look real). */
const CDN_FOLDER: Record<string, string> = {
  image: "t62.7118-24",
  video: "t62.7161-24",
  audio: "t62.7114-24",
  document: "t62.7119-24"
}

/** The base64url form Baileys puts in the upload path (`encodeBase64EncodedStringForUpload`). */
const base64Url = (bytes: Buffer): string => bytes.toString("base64").replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

export interface MediaRequest {
  readonly method: string
  /** path without the query */
  readonly path: string
  readonly status: number
  readonly range: string | undefined
}

export class MediaServer {
  /** the PEM a client must trust (`https.Agent({ ca })`, undici `connect: { ca }`) */
  readonly ca = pem("cert")
  /** the upload token `media_conn` hands out */
  readonly auth = randomBytes(24).toString("base64")
  /** every HTTP request the server answered, oldest first */
  readonly requests: MediaRequest[] = []
  private readonly blobs = new Map<string, Buffer>()

  private constructor(
    private readonly server: Server,
    /** `127.0.0.1:<port>` */
    readonly host: string
  ) {}

  static async start(host: string): Promise<MediaServer> {
    let media: MediaServer | undefined
    const server = createServer({ key: pem("key"), cert: pem("cert") }, (req, res) => media?.handle(req, res))
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, host, () => resolve())
    })
    media = new MediaServer(server, `${host}:${(server.address() as AddressInfo).port}`)
    return media
  }

  /** The `<media_conn>` of the answer to `<iq xmlns=w:m type=set><media_conn/>` (Baileys' refreshMediaConn). */
  mediaConnNode(): BinaryNode {
    return {
      tag: "media_conn",
      attrs: { auth: this.auth, ttl: "300", auth_ttl: "21600", max_buckets: "12" },
      content: [{ tag: "host", attrs: { hostname: this.host, maxContentLengthBytes: `${MAX_UPLOAD_BYTES}` } }]
    }
  }

  /** Keep an encrypted blob (what an upload does) and return where it can be fetched. */
  store(mediaType: string, encrypted: Buffer): { url: string; directPath: string } {
    const folder = CDN_FOLDER[mediaType] ?? CDN_FOLDER.image
    const path = `/v/${folder}/${randomBytes(12).toString("hex")}_n.enc`
    this.blobs.set(path, encrypted)
    const directPath = `${path}?ccb=11-4&oh=01_${randomBytes(16).toString("hex")}&oe=${(Math.floor(Date.now() / 1000) + 86_400 * 30).toString(16).toUpperCase()}&_nc_sid=5e03e0`
    return { url: `https://${this.host}${directPath}&mms3=true`, directPath }
  }

  /** The encrypted blob behind a `url` or `directPath`, if the server still has it. */
  blob(urlOrPath: string): Buffer | undefined {
    return this.blobs.get(new URL(urlOrPath, `https://${this.host}`).pathname)
  }

  /** Forget a blob, as WhatsApp does after a while: downloads then get 404 (Baileys: re-upload). */
  expire(urlOrPath: string): boolean {
    return this.blobs.delete(new URL(urlOrPath, `https://${this.host}`).pathname)
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise(resolve => this.server.close(() => resolve()))
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", `https://${this.host}`)
    const answer = (status: number, body: Buffer | string, headers: Record<string, string | number> = {}) => {
      this.requests.push({ method: req.method ?? "", path: url.pathname, status, range: req.headers.range })
      res.writeHead(status, headers).end(body)
    }
    if (req.method === "GET") {
      const blob = this.blobs.get(url.pathname)
      if (!blob) return answer(404, "")
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "")
      if (!range) return answer(200, blob, { "content-type": "application/octet-stream", "content-length": blob.length })
      const start = Number(range[1])
      const end = Math.min(range[2] ? Number(range[2]) : blob.length - 1, blob.length - 1)
      if (start > end) return answer(416, "", { "content-range": `bytes */${blob.length}` })
      const part = blob.subarray(start, end + 1)
      return answer(206, part, { "content-range": `bytes ${start}-${end}/${blob.length}`, "content-length": part.length })
    }
    const upload = /^\/mms\/([a-z-]+)\/([A-Za-z0-9_-]+)$/.exec(url.pathname)
    if (req.method !== "POST" || !upload) return answer(404, "")
    const chunks: Buffer[] = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      const json = (status: number, value: object) => answer(status, JSON.stringify(value), { "content-type": "application/json" })
      if (url.searchParams.get("auth") !== this.auth) return json(401, { error: "bad auth" })
      // the path names the SHA-256 of the encrypted file: the server checks it
      if (base64Url(createHash("sha256").update(body).digest()) !== upload[2]) return json(400, { error: "hash mismatch" })
      if (body.length > MAX_UPLOAD_BYTES) return json(413, { error: "too large" })
      const { url: mediaUrl, directPath } = this.store(upload[1]!, body)
      json(200, { url: mediaUrl, direct_path: directPath })
    })
  }
}
