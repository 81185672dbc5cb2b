import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import sharp from "sharp"
import { ChatId } from "../src/domain/Ids.js"
import type { Settings } from "../src/domain/Settings.js"
import { thumbnailMaxSide } from "../src/runtime/network/linkPreview.js"
import { startCore } from "./support/core.js"
import { eventually, readySession, startGateway, type TestGateway } from "./support/gateway.js"
import { hang, type Route, send, serve } from "./support/mediaIntake.js"
import { startConnectProxy } from "./support/proxies.js"

/**
 * Link previews over real HTTP: alice's texts with a URL, a loopback web server serving the
 * page and its image, and the gateway fetching them for the sandbox session before the send.
 */

/** Loopback pages: the SSRF guard would refuse them, which `MEDIA_ALLOW_PRIVATE` lifts, as for media URLs. */
const media = (allowPrivate: boolean): Partial<Settings> => ({
  media: { url: Option.none(), maxBytes: 64 * 1024 * 1024, allowPrivate, fetchTimeout: Duration.seconds(30), incoming: "store", keepRevoked: false }
})

const page = (title: string, description: string, image: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>ignored for og:title</title>
<meta property="og:title" content="${title}"><meta property="og:description" content="${description}">
<meta property="og:image" content="${image}"></head><body>${"<p>filler</p>".repeat(500)}</body></html>`

const html = (text: string): Route => send(new Uint8Array(Buffer.from(text)), { "content-type": "text/html; charset=utf-8" })

const picture = Effect.promise(() =>
  sharp({ create: { width: 800, height: 400, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer())

/** A site with a page (og tags, the image by a relative URL) and its 800×400 PNG. */
const site = Effect.gen(function*() {
  const png = new Uint8Array(yield* picture)
  return yield* serve({
    "/article": html(page("Sandbox news", "All about previews", "/cover.png")),
    "/cover.png": send(png, { "content-type": "image/png" }),
    "/plain.txt": send(new Uint8Array(Buffer.from("not a page")), { "content-type": "text/plain" }),
    "/hang": hang
  })
})

const sendText = (gateway: TestGateway, from: string, to: string, body: Record<string, unknown>) =>
  Effect.promise(() => gateway.call("POST", `/api/sessions/${from}/messages/send-text`, { body: { chatId: to, ...body } }))

/** The sender's copy once it has left (status past pending). */
const sentCopy = (gateway: TestGateway, sessionId: string, messageId: string, timeoutMs = 10_000) =>
  Effect.promise(() =>
    eventually(
      () => gateway.call("GET", `/api/sessions/${sessionId}/messages/${messageId}`),
      (r) => r.body.status !== "pending",
      timeoutMs
    )).pipe(Effect.map((r) => r.body))

const pair = (gateway: TestGateway) =>
  Effect.promise(async () => ({ alice: await readySession(gateway, "alice"), bob: await readySession(gateway, "bob") }))

describe("link previews", () => {
  it.scopedLive("a text's first URL: title, description and a small JPEG of og:image, stored on the message", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* site
      const gateway = yield* startGateway(media(true))
      const { alice, bob } = yield* pair(gateway)
      const url = `${base}/article?id=7`
      const sent = yield* sendText(gateway, alice.id, bob.phone, { text: `read this: ${url}. Then tell me` })
      expect(sent.status).toBe(201)
      const message = yield* sentCopy(gateway, alice.id, sent.body.messageId)
      expect(message.status).not.toBe("failed")
      expect(message.linkPreview).toMatchObject({ url, title: "Sandbox news", description: "All about previews" })
      const thumbnail = yield* Effect.promise(() => sharp(Buffer.from(message.linkPreview.thumbnail, "base64")).metadata())
      expect({ format: thumbnail.format, width: thumbnail.width, height: thumbnail.height })
        .toEqual({ format: "jpeg", width: thumbnailMaxSide, height: thumbnailMaxSide / 2 })
      expect(seen.requests.map((request) => request.path)).toEqual(["/article", "/cover.png"])
    }))

  it.scopedLive("none with linkPreview:false (nothing fetched), for a page that is not HTML, or a loopback page under the SSRF guard", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* site
      const guarded = yield* startGateway(media(false))
      const open = yield* startGateway(media(true))
      const cases: ReadonlyArray<readonly [TestGateway, Record<string, unknown>]> = [
        [open, { text: `${base}/article`, linkPreview: false }],
        [open, { text: `${base}/plain.txt` }],
        [guarded, { text: `${base}/article` }]
      ]
      for (const [index, [gateway, body]] of cases.entries()) {
        const { alice, bob } = yield* Effect.promise(async () => ({
          alice: await readySession(gateway, `alice-${index}`),
          bob: await readySession(gateway, `bob-${index}`)
        }))
        const sent = yield* sendText(gateway, alice.id, bob.phone, body)
        const message = yield* sentCopy(gateway, alice.id, sent.body.messageId)
        expect(message.status).not.toBe("failed")
        expect(message.linkPreview).toBeNull()
      }
      expect(seen.requests.map((request) => request.path)).toEqual(["/plain.txt"])
    }))

  it.scopedLive("a page that does not answer within 5 s: the text goes without a preview, about 5 s late", () =>
    Effect.gen(function*() {
      const { base } = yield* site
      const gateway = yield* startGateway(media(true))
      const { alice, bob } = yield* pair(gateway)
      const started = Date.now()
      const sent = yield* sendText(gateway, alice.id, bob.phone, { text: `${base}/hang` })
      const message = yield* sentCopy(gateway, alice.id, sent.body.messageId, 15_000)
      const waited = Date.now() - started
      expect(message.status).not.toBe("failed")
      expect(message.linkPreview).toBeNull()
      expect(waited).toBeGreaterThanOrEqual(4_900)
      expect(waited).toBeLessThan(9_000)
    }), 20_000)

  it.scopedLive("goes to the engine with the thumbnail as bytes", () =>
    Effect.gen(function*() {
      const { base } = yield* site
      const core = yield* startCore(media(true))
      const [alice, bob] = yield* Effect.forEach(["alice", "bob"], (name) =>
        Effect.gen(function*() {
          const session = yield* core.sessions.create({ name })
          yield* core.supervisor.start(session.id)
          yield* core.awaitStatus(session.id, "ready")
          return yield* core.sessions.get(session.id)
        }))
      yield* core.messaging.sendText(alice!.id, { chatId: ChatId.make(`${bob!.phone}@c.us`), text: `${base}/article` })
      const command = yield* Effect.gen(function*() {
        for (;;) {
          const [first] = yield* core.sentCommands
          if (first !== undefined) return first
          yield* Effect.sleep("20 millis")
        }
      }).pipe(Effect.timeout("10 seconds"))
      expect(command.content).toMatchObject({ type: "text", linkPreview: { url: `${base}/article`, title: "Sandbox news" } })
      const preview = command.content.type === "text" ? command.content.linkPreview : undefined
      const metadata = yield* Effect.promise(() => sharp(preview!.thumbnail!).metadata())
      expect(metadata.format).toBe("jpeg")
    }))

  it.scopedLive("goes through the session's proxy, credentials and all", () =>
    Effect.gen(function*() {
      const { base, seen } = yield* site
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startConnectProxy({ user: "pre", password: "view" })),
        (proxy) => Effect.promise(() => proxy.close())
      )
      const gateway = yield* startGateway(media(true))
      const { bob } = yield* pair(gateway)
      const created = yield* Effect.promise(() =>
        gateway.call("POST", "/api/sessions", { body: { name: "proxied", proxy: { url: `http://pre:view@127.0.0.1:${proxy.port}` } } }))
      const alice = created.body.id as string
      yield* Effect.promise(async () => {
        await gateway.call("POST", `/api/sessions/${alice}/start`)
        await eventually(() => gateway.call("GET", `/api/sessions/${alice}`), (r) => r.body.status === "ready")
      })
      const sent = yield* sendText(gateway, alice, bob.phone, { text: `${base}/article` })
      const message = yield* sentCopy(gateway, alice, sent.body.messageId)
      expect(message.linkPreview).toMatchObject({ title: "Sandbox news" })
      expect(message.linkPreview.thumbnail).toBeDefined()
      const host = new URL(base).host
      expect(proxy.tunnels).toEqual([host, host])
      expect(seen.requests.map((request) => request.path)).toEqual(["/article", "/cover.png"])
    }))

  it.scopedLive("reaches the recipient's stored copy", () =>
    Effect.gen(function*() {
      const { base } = yield* site
      const gateway = yield* startGateway(media(true))
      const { alice, bob } = yield* pair(gateway)
      yield* sendText(gateway, alice.id, bob.phone, { text: `read this: ${base}/article` })
      const inbox = yield* Effect.promise(() =>
        eventually(
          () => gateway.call("GET", `/api/sessions/${bob.id}/messages?direction=in`),
          (r) => r.body.data.some((m: { linkPreview: unknown }) => m.linkPreview !== null)
        ))
      const copy = inbox.body.data.find((m: { linkPreview: unknown }) => m.linkPreview !== null)
      expect(copy.linkPreview).toMatchObject({ url: `${base}/article`, title: "Sandbox news", description: "All about previews" })
      const thumbnail = yield* Effect.promise(() => sharp(Buffer.from(copy.linkPreview.thumbnail, "base64")).metadata())
      expect(thumbnail.format).toBe("jpeg")
    }))
})
