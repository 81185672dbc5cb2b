import { Boom } from "@hapi/boom"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { proto, type WAMessage } from "@whiskeysockets/baileys"
import * as https from "node:https"
import * as net from "node:net"
import { Effect, Exit, Option, Scope } from "effect"
import { Agent as UndiciAgent, type Dispatcher, ProxyAgent } from "undici"
import type { EngineError, InboundMedia } from "../src/runtime/Engine.js"
import { acquireNetworkAgents } from "../src/runtime/engines/baileys/agents.js"
import {
  downloadMedia,
  MediaRef,
  type MediaTransfer,
  sendErrorOf,
  socketTransfer
} from "../src/runtime/engines/baileys/media.js"
import { png } from "./support/mediaSamples.js"
import { MediaServer } from "./support/wa-peer/index.js"
import { mediaMessage } from "./support/wa-peer/media.js"

/**
 * Downloading received media with the real `downloadMediaMessage` against the loopback peer's
 * HTTPS media server (self-signed, trusted through `mediaCa`), and the re-upload the adapter
 * does itself when the server no longer has the file. The phone's side of a re-upload
 * (`updateMediaMessage`) is played by a fake: the peer does not answer re-upload requests.
 */

let server: MediaServer
beforeAll(async () => {
  server = await MediaServer.start("127.0.0.1")
})
afterAll(() => server.close())

const IMAGE = png("baileys-media")

/** A message from a phone that uploaded `IMAGE` to the media server, as Baileys hands it over. */
const receivedImage = async (): Promise<WAMessage> => ({
  key: { remoteJid: "99887766554433@lid", remoteJidAlt: "15551234567@s.whatsapp.net", fromMe: false, id: "3EB0MEDIA" },
  message: proto.Message.fromObject(await mediaMessage({ kind: "image", bytes: IMAGE, mimetype: "image/png" }, (type, blob) => server.store(type, blob)))
})

const inbound = (message: WAMessage): InboundMedia => ({ mimetype: "image/png", filename: null, size: IMAGE.length, ptt: false, ref: new MediaRef(message) })

const imageOf = (message: WAMessage) => message.message!.imageMessage!

/** What a phone's re-upload does: the same encrypted file, at a new location. */
const uploadAgain = (message: WAMessage, blob: Buffer): WAMessage => {
  const { directPath, url } = server.store("image", blob)
  return { ...message, message: { imageMessage: { ...imageOf(message), url, directPath } } }
}

/** The media server forgets the file, as WhatsApp does after a while; returns the encrypted blob. */
const expire = (message: WAMessage): Buffer => {
  const blob = server.blob(imageOf(message).directPath!)!
  server.expire(imageOf(message).directPath!)
  return blob
}

/** The agents a connection with `mediaCa` gets, for one test's scope. */
const trusted = Effect.suspend(() => Effect.map(acquireNetworkAgents(Option.none(), server.ca), (agents) => agents.dispatcher))

const withReupload = (dispatcher: Dispatcher | undefined, reupload: MediaTransfer["reupload"]) => {
  const calls: Array<WAMessage> = []
  const transfer: MediaTransfer = {
    ...socketTransfer({ updateMediaMessage: () => Promise.reject(new Error("unused")) }, dispatcher),
    reupload: (message) => {
      calls.push(message)
      return reupload(message)
    }
  }
  return { calls, transfer }
}

const failure = (effect: Effect.Effect<Uint8Array, EngineError>) =>
  Effect.flip(effect).pipe(Effect.map(({ code, message, transient }) => ({ code, message, transient })))

const fetches = (since: number) => server.requests.slice(since).filter((r) => r.method === "GET").map((r) => r.status)

describe("Baileys media download", () => {
  it.scopedLive("downloads and decrypts with the dispatcher that trusts mediaCa", () =>
    Effect.gen(function*() {
      const dispatcher = yield* trusted
      const message = yield* Effect.promise(receivedImage)
      const { calls, transfer } = withReupload(dispatcher, () => Promise.reject(new Error("no re-upload expected")))
      const bytes = yield* downloadMedia(transfer, inbound(message))
      expect(Buffer.from(bytes).equals(Buffer.from(IMAGE))).toBe(true)
      expect(calls).toEqual([])
    }))

  it.scopedLive("a 404 asks the phone to upload again, then fetches the new copy once", () =>
    Effect.gen(function*() {
      const dispatcher = yield* trusted
      const message = yield* Effect.promise(receivedImage)
      const blob = expire(message)
      const before = server.requests.length
      const { calls, transfer } = withReupload(dispatcher, (m) => Promise.resolve(uploadAgain(m, blob)))
      const bytes = yield* downloadMedia(transfer, inbound(message))
      expect(Buffer.from(bytes).equals(Buffer.from(IMAGE))).toBe(true)
      expect(calls.map((m) => m.key.id)).toEqual(["3EB0MEDIA"])
      expect(fetches(before)).toEqual([404, 200])
    }))

  it.scopedLive("still gone after the re-upload: MEDIA_GONE, not transient, and no second re-upload", () =>
    Effect.gen(function*() {
      const dispatcher = yield* trusted
      const message = yield* Effect.promise(receivedImage)
      expire(message)
      const before = server.requests.length
      // The phone answers with a location the server does not have either.
      const { calls, transfer } = withReupload(dispatcher, (m) => Promise.resolve(m))
      const error = yield* failure(downloadMedia(transfer, inbound(message)))
      expect(error).toMatchObject({ code: "MEDIA_GONE", transient: false })
      // The URL's query holds access tokens: never in an error.
      expect(error.message).not.toContain("oh=")
      expect(calls).toHaveLength(1)
      expect(fetches(before)).toEqual([404, 404])
    }))

  it.scopedLive("the phone refuses the re-upload, or never answers: the download fails with why", () =>
    Effect.gen(function*() {
      const dispatcher = yield* trusted
      const message = yield* Effect.promise(receivedImage)
      expire(message)
      // What rc14's updateMediaMessage throws when the phone no longer has the file.
      const refused = withReupload(dispatcher, () => Promise.reject(new Boom("Media re-upload failed by device (NOT_FOUND)", { statusCode: 404 })))
      expect(yield* failure(downloadMedia(refused.transfer, inbound(message)))).toMatchObject({ code: "MEDIA_REUPLOAD_FAILED_404", transient: false })

      const silent = withReupload(dispatcher, () => new Promise<never>(() => undefined))
      expect(yield* failure(downloadMedia(silent.transfer, inbound(message), "50 millis"))).toMatchObject({
        code: "MEDIA_REUPLOAD_TIMEOUT",
        transient: true
      })
    }))

  it.scopedLive("network failures: an untrusted certificate is not transient, a refused connection is", () =>
    Effect.gen(function*() {
      const message = yield* Effect.promise(receivedImage)
      const { transfer: untrusted } = withReupload(undefined, () => Promise.reject(new Error("no re-upload expected")))
      expect(yield* failure(downloadMedia(untrusted, inbound(message)))).toMatchObject({
        code: "MEDIA_SERVER_UNREACHABLE",
        message: expect.stringContaining("SELF_SIGNED"),
        transient: false
      })

      const closedPort = yield* Effect.promise(() => freePort())
      const nowhere: WAMessage = {
        ...message,
        message: { imageMessage: { ...imageOf(message), url: `https://127.0.0.1:${closedPort}/v/x_n.enc`, directPath: null } }
      }
      const { transfer } = withReupload(yield* trusted, () => Promise.reject(new Error("no re-upload expected")))
      expect(yield* failure(downloadMedia(transfer, inbound(nowhere)))).toMatchObject({
        code: "MEDIA_SERVER_UNREACHABLE",
        message: expect.stringContaining("ECONNREFUSED"),
        transient: true
      })
    }))

  it.effect("a ref that is not this engine's is refused", () =>
    Effect.gen(function*() {
      const { transfer } = withReupload(undefined, () => Promise.reject(new Error("unused")))
      const error = yield* failure(downloadMedia(transfer, { ...inbound({ key: {} }), ref: { cdnKey: "sandbox" } }))
      expect(error).toMatchObject({ code: "MEDIA_NOT_FOUND", transient: false })
    }))
})

describe("Baileys media agents and upload errors", () => {
  it.effect("a failed upload is MEDIA_UPLOAD_FAILED (transient); other send errors keep their code", () =>
    Effect.sync(() => {
      expect(sendErrorOf(new Boom("Media upload failed on all hosts", { statusCode: 500 }))).toMatchObject({
        code: "MEDIA_UPLOAD_FAILED",
        transient: true
      })
      expect(sendErrorOf(new Boom("Connection Closed", { statusCode: 428 }))).toMatchObject({ code: "SEND_FAILED_428", transient: true })
    }))

  it.live("mediaCa: an upload agent and a download dispatcher that trust it, closed with the connection's scope", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const agents = yield* Scope.extend(acquireNetworkAgents(Option.none(), server.ca), scope)
      expect(agents.agent).toBeUndefined()
      const status = yield* Effect.promise(() =>
        new Promise<number>((resolve, reject) => {
          https.get(`https://${server.host}/nothing-here`, { agent: agents.fetchAgent }, (response) => {
            response.resume()
            resolve(response.statusCode ?? 0)
          }).on("error", reject)
        })
      )
      expect(status).toBe(404) // TLS verified against mediaCa; the server answered
      yield* Scope.close(scope, Exit.void)
      expect(agents.dispatcher).toBeInstanceOf(UndiciAgent)
      expect((agents.dispatcher as UndiciAgent).destroyed).toBe(true)

      const plain = yield* Effect.scoped(acquireNetworkAgents(Option.none(), undefined))
      expect(plain).toEqual({ agent: undefined, fetchAgent: undefined, dispatcher: undefined })
      // A proxy's agents win: mediaCa is for loopback peers, never in front of a proxy.
      const proxied = yield* Effect.scoped(acquireNetworkAgents(Option.some("http://127.0.0.1:3128"), server.ca))
      expect(proxied.dispatcher).toBeInstanceOf(ProxyAgent)
    }))
})

/** A loopback port nothing listens on. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
