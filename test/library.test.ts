import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Fiber, Layer, Logger, LogLevel, Option, Redacted, Scope, Stream } from "effect"
import * as fs from "node:fs"
import { createServer } from "node:http"
import * as path from "node:path"
// Everything comes from the package's public entry, as a library user would import it.
import {
  Cache,
  CacheUnavailable,
  ChatId,
  defaultSettings,
  Events,
  Health,
  MediaStore,
  type MediaStoreService,
  Messaging,
  Sessions,
  type Settings,
  storeOfDatabase,
  Switchboard,
  serveWithSwitchboardApi,
  type SwitchboardServices
} from "../src/index.js"
import { SandboxNetwork } from "../src/entry/sandbox.js"
import { memoryCache } from "../src/layers/cache/cacheLayers.js"
import { makeCall, TEST_KEY, tempDir } from "./support/gateway.js"
import { files } from "./support/mediaIntake.js"

/** Fast sandbox linking, no pacing: the tests wait for nothing they do not test. */
const quick = { sandboxPairDelay: Duration.millis(20), pacing: { sendsPerMinute: 0 } }

/** Runs `program` against a Switchboard layer, in a scope that closes (draining) after it. */
const within = <A, E, E2>(layer: Layer.Layer<SwitchboardServices, E2>, program: Effect.Effect<A, E, SwitchboardServices | Scope.Scope>) =>
  Effect.scoped(Effect.provide(program, layer)).pipe(Logger.withMinimumLogLevel(LogLevel.Warning))

const readySession = (name: string) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const session = yield* sessions.create({ name, autoStart: true })
    yield* sessions.awaitStatus(session.id, (status) => status === "ready", "10 seconds")
    return session
  })

/** A MediaStore in memory, whose keys the test can read. */
const mediaInMemory = () => {
  const objects = new Map<string, Uint8Array>()
  const service: MediaStoreService = {
    put: (key, data) => Effect.sync(() => void objects.set(key, data)),
    read: (key) => Effect.sync(() => Option.fromNullable(objects.get(key))),
    stream: (key) =>
      Effect.sync(() => Option.map(Option.fromNullable(objects.get(key)), (data) => ({ size: data.byteLength, stream: Stream.make(data) }))),
    remove: (key) => Effect.sync(() => void objects.delete(key)),
    removeAll: (prefix) => Effect.sync(() => [...objects.keys()].filter((key) => key.startsWith(`${prefix}/`)).forEach((key) => objects.delete(key)))
  }
  return { objects, layer: Layer.succeed(MediaStore, service) }
}

describe("Switchboard embedded in an Effect program, without HTTP", () => {
  it.live("creates a sandbox session, waits for ready, sends a message and hears the echo as a typed event", () =>
    within(
      Switchboard.layer({ dataDir: tempDir(), engine: "sandbox", settings: quick }),
      Effect.gen(function*() {
        const messaging = yield* Messaging
        // Subscribed before anything happens: the session's status changes come first, and are filtered out.
        const received = yield* Events.ofKind("message.received")
        const session = yield* readySession("embedded")

        const echo = ChatId.make("+1 555 000 7777")
        const sent = yield* messaging.sendText(session.id, { chatId: echo, text: "hello from a library" })
        const event = Option.getOrThrow(yield* received.pipe(Stream.runHead, Effect.timeout("10 seconds")))
        expect(event.event).toBe("message.received")
        expect(event.sessionId).toBe(session.id)
        // Typed by its kind: the message and both ids of the sender (an echo contact has no LID).
        expect(event.data.message.text).toBe("hello from a library")
        expect(event.data.message.from).toBe(echo)
        expect(event.data.phone).toBe(echo)
        expect(event.data.lid).toBeNull()
        expect((yield* messaging.get(session.id, sent.messageId)).fromMe).toBe(true)
      })
    ))

  it.live("Events.ofKind takes several kinds and passes only those", () =>
    within(
      Switchboard.layer({ dataDir: tempDir(), engine: "sandbox", settings: quick }),
      Effect.gen(function*() {
        const statuses = yield* Events.ofKind("session.status", "session.qr")
        yield* readySession("watched")
        const seen = yield* statuses.pipe(
          Stream.takeUntil((event) => event.event === "session.status" && event.data.status === "ready"),
          Stream.runCollect,
          Effect.timeout("10 seconds")
        )
        const kinds = new Set(Array.from(seen, (event) => event.event))
        expect([...kinds].sort()).toEqual(["session.qr", "session.status"])
        const qr = Array.from(seen).find((event) => event.event === "session.qr")
        expect(qr?.event === "session.qr" && typeof qr.data.expiresAt).toBe("string")
      })
    ))

  it.live("with the sandbox engine the layer offers its network, for fault injection", () =>
    Effect.gen(function*() {
      const program = Effect.gen(function*() {
        const session = yield* readySession("faulty")
        const network = yield* SandboxNetwork
        yield* network.refuseConnections(session.id, "30 seconds")
        yield* network.dropConnection(session.id)
        const dropped = yield* (yield* Sessions).awaitStatus(session.id, (status) => status !== "ready", "10 seconds")
        expect(dropped.status).not.toBe("ready")
      })
      yield* Effect.scoped(Effect.provide(program, Switchboard.layer({ dataDir: tempDir(), engine: "sandbox", settings: quick }))).pipe(
        Logger.withMinimumLogLevel(LogLevel.Warning)
      )
    }))

  it.live("dataDir decides where the database is: a second start on the same dataDir finds the session", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      expect((yield* defaultSettings({ dataDir })).databaseUrl).toBe(`sqlite:${path.join(dataDir, "switchboard.db")}`)
      // As an app without exactOptionalPropertyTypes may write it, with the variable unset.
      const unset = { dataDir, databaseUrl: undefined } as unknown as Partial<Settings>
      expect((yield* defaultSettings(unset)).databaseUrl).toBe(`sqlite:${path.join(dataDir, "switchboard.db")}`)
      const layer = () => Switchboard.layer({ dataDir, engine: "sandbox", settings: quick })
      const created = yield* within(layer(), Effect.flatMap(Sessions, (sessions) => sessions.create({ name: "kept" })))
      expect(fs.existsSync(path.join(dataDir, "switchboard.db"))).toBe(true)
      const found = yield* within(layer(), Effect.flatMap(Sessions, (sessions) => sessions.get(created.id)))
      expect(found.name).toBe("kept")
    }))

  it.live("a Store given as a layer is the one sessions are kept in, over the dataDir's database", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      const elsewhere = path.join(tempDir(), "elsewhere.db")
      const store = storeOfDatabase(`sqlite:${elsewhere}`)
      const created = yield* within(
        Switchboard.layer({ dataDir, engine: "sandbox", settings: quick, store }),
        Effect.flatMap(Sessions, (sessions) => sessions.create({ name: "kept elsewhere" }))
      )
      expect(fs.existsSync(path.join(dataDir, "switchboard.db"))).toBe(false)
      // A start on the same Store finds the session; one on the dataDir's own database does not.
      const found = yield* within(
        Switchboard.layer({ dataDir: tempDir(), engine: "sandbox", settings: quick, store: storeOfDatabase(`sqlite:${elsewhere}`) }),
        Effect.flatMap(Sessions, (sessions) => sessions.get(created.id))
      )
      expect(found.name).toBe("kept elsewhere")
      const missing = yield* within(
        Switchboard.layer({ dataDir, engine: "sandbox", settings: quick }),
        Effect.flatMap(Sessions, (sessions) => Effect.flip(sessions.get(created.id)))
      )
      expect(missing._tag).toBe("NotFound")
    }))

  it.live("a MediaStore given as a layer is the one media is written to, over the settings' own", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      const media = mediaInMemory()
      yield* within(
        Switchboard.layer({ dataDir, engine: "sandbox", settings: quick, media: media.layer }),
        Effect.gen(function*() {
          const session = yield* readySession("pictures")
          const sent = yield* (yield* Messaging).sendMedia(session.id, {
            chatId: ChatId.make("15550007777"),
            kind: "image",
            source: { data: files.png }
          })
          expect(media.objects.get(`${session.id}/${sent.messageId}`)).toEqual(files.png)
        })
      )
      // The default store (files under <dataDir>/media) was never built.
      expect(fs.existsSync(path.join(dataDir, "media"))).toBe(false)
    }))

  it.live("a setting group's override names only the fields it changes; the group's others keep their defaults", () =>
    Effect.gen(function*() {
      const defaults = yield* defaultSettings({ dataDir: tempDir() })
      const settings = yield* defaultSettings({ dataDir: tempDir(), media: { maxBytes: 2048 }, security: { allowedCidrs: ["127.0.0.1/32"] } })
      expect(settings.media).toEqual({ ...defaults.media, maxBytes: 2048 })
      expect(settings.security).toEqual({ ...defaults.security, allowedCidrs: ["127.0.0.1/32"] })
      // And the layer runs on it: a picture over the 2 KB the override allows is refused, a text goes.
      yield* within(
        Switchboard.layer({ dataDir: tempDir(), engine: "sandbox", settings: { ...quick, media: { maxBytes: 2048 } } }),
        Effect.gen(function*() {
          const session = yield* readySession("small-media")
          const messaging = yield* Messaging
          const tooLarge = yield* Effect.flip(messaging.sendMedia(session.id, {
            chatId: ChatId.make("15550007777"),
            kind: "image",
            source: { data: new Uint8Array(4096).fill(1) }
          }))
          expect(tooLarge._tag).toBe("PayloadTooLarge")
          yield* messaging.sendText(session.id, { chatId: ChatId.make("15550007777"), text: "still fine" })
        })
      )
    }))

  it.live("a Cache given as a layer is the one the gateway uses, over the settings' own", () =>
    Effect.gen(function*() {
      // The memory cache, but unreachable: health says so only if it is the one in use.
      const unreachable = Layer.effect(
        Cache,
        Effect.map(Effect.provide(Cache, memoryCache()), (cache) => ({
          ...cache,
          ping: Effect.fail(new CacheUnavailable({ operation: "ping", cause: "the test's cache is down" }))
        }))
      )
      const report = yield* within(
        Switchboard.layer({ dataDir: tempDir(), engine: "sandbox", settings: quick, cache: unreachable }),
        Effect.flatMap(Health, (health) => health.report)
      )
      expect(report.status).toBe("degraded")
      expect(report.checks.cache).toBe("memory: unreachable")
    }))
})

describe("Switchboard's REST API served on the embedder's own HTTP server", () => {
  it.live("answers a bad body with the API's error shape, caps bodies, and serves the routes", () =>
    Effect.gen(function*() {
      const server = NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })
      const layer = Switchboard.apiLayer({
        dataDir: tempDir(),
        engine: "sandbox",
        settings: { ...quick, apiKey: Option.some(Redacted.make(TEST_KEY)), bodyMaxBytes: 4096 }
      }).pipe(Layer.provideMerge(server))
      yield* Effect.scoped(Effect.gen(function*() {
        const address = (yield* HttpServer.HttpServer).address as HttpServer.TcpAddress
        const call = makeCall(`http://127.0.0.1:${address.port}`)
        return yield* Effect.promise(async () => {
          const created = await call("POST", "/api/sessions", { body: { name: "over-my-server" } })
          expect(created.status).toBe(201)

          // A wrong type: the API's shape, not Schema's `{"issues":[…]}` quoting the input.
          const wrongType = await call("POST", "/api/sessions", { body: { name: { secret: "do not echo" } } })
          expect(wrongType.status).toBe(400)
          expect(wrongType.body).toMatchObject({ statusCode: 400, code: "VALIDATION_FAILED" })
          expect(wrongType.body).not.toHaveProperty("issues")
          expect(JSON.stringify(wrongType.body)).not.toContain("do not echo")

          const malformed = await call("POST", "/api/sessions", { raw: "{\"name\": " })
          expect(malformed.status).toBe(400)
          expect(malformed.body).toMatchObject({ statusCode: 400, code: "VALIDATION_FAILED" })

          const tooLarge = await call("POST", "/api/sessions", { body: { name: "x".repeat(8192) } })
          expect(tooLarge.status).toBe(413)
          expect(tooLarge.body).toMatchObject({ statusCode: 413 })

          // The middleware around the routes is there too: every answer carries its request id.
          expect(created.headers.get("x-request-id")).toBeTruthy()
        })
      }).pipe(Effect.provide(layer), Logger.withMinimumLogLevel(LogLevel.Warning)))
    }))
})

describe("Switchboard's REST API mounted in the embedder's own router", () => {
  it.live("serves the embedder's routes and the API side by side, the API with all of its behaviour", () =>
    Effect.gen(function*() {
      // The embedder's own server and router: a route of its own, and the API under /api.
      const served = serveWithSwitchboardApi((api) =>
        HttpRouter.empty.pipe(
          HttpRouter.get("/hello", HttpServerResponse.text("hello from the embedder")),
          HttpRouter.mountApp("/api", api, { includePrefix: true })
        )
      )
      const layer = served.pipe(
        Layer.provideMerge(Switchboard.appLayer({
          dataDir: tempDir(),
          engine: "sandbox",
          settings: { ...quick, apiKey: Option.some(Redacted.make(TEST_KEY)), bodyMaxBytes: 4096 }
        })),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
      yield* Effect.scoped(Effect.gen(function*() {
        const address = (yield* HttpServer.HttpServer).address as HttpServer.TcpAddress
        const base = `http://127.0.0.1:${address.port}`
        const call = makeCall(base)
        return yield* Effect.promise(async () => {
          const own = await fetch(`${base}/hello`)
          expect(own.status).toBe(200)
          expect(await own.text()).toBe("hello from the embedder")

          const created = await call("POST", "/api/sessions", { body: { name: "in-my-router", autoStart: true } })
          expect(created.status).toBe(201)
          expect(created.headers.get("x-request-id")).toBeTruthy()
          const listed = await call("GET", "/api/sessions")
          expect(listed.body.data.map((session: { name: string }) => session.name)).toEqual(["in-my-router"])

          // A key is still required, and refused in the API's shape.
          const anonymous = await fetch(`${base}/api/sessions`)
          expect(anonymous.status).toBe(401)
          expect(await anonymous.json()).toMatchObject({ statusCode: 401, code: "UNAUTHORIZED" })

          const wrongType = await call("POST", "/api/sessions", { body: { name: { secret: "do not echo" } } })
          expect(wrongType.status).toBe(400)
          expect(wrongType.body).toMatchObject({ statusCode: 400, code: "VALIDATION_FAILED" })
          expect(JSON.stringify(wrongType.body)).not.toContain("do not echo")

          const tooLarge = await call("POST", "/api/sessions", { body: { name: "x".repeat(8192) } })
          expect(tooLarge.status).toBe(413)

          // An unknown path under /api is the API's 404, answered inside it, with its request id.
          const unknown = await call("GET", "/api/no-such-thing")
          expect(unknown.status).toBe(404)
          expect(unknown.body).toMatchObject({ statusCode: 404 })
          expect(unknown.headers.get("x-request-id")).toBeTruthy()
        })
      }).pipe(Effect.provide(layer), Logger.withMinimumLogLevel(LogLevel.Warning)))
    }))

  it.live("drains before the embedder's server stops: a request during the drain is answered 503, not left hanging", () =>
    Effect.gen(function*() {
      const layer = serveWithSwitchboardApi((api) => HttpRouter.empty.pipe(HttpRouter.mountApp("/api", api, { includePrefix: true }))).pipe(
        Layer.provideMerge(Switchboard.appLayer({
          dataDir: tempDir(),
          engine: "sandbox",
          // sends held back by the pacing (one each 500 ms): the drain waits for them
          settings: { ...quick, pacing: { sendsPerMinute: 120 }, apiKey: Option.some(Redacted.make(TEST_KEY)) }
        })),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(layer, scope)
      const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
      const base = `http://127.0.0.1:${address.port}`
      yield* Effect.gen(function*() {
        const session = yield* readySession("draining")
        const messaging = yield* Messaging
        for (let i = 0; i < 4; i++) yield* messaging.sendText(session.id, { chatId: ChatId.make("15550007777"), text: `held ${i}` })
      }).pipe(Effect.provide(context))

      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* Effect.sleep("300 millis")
      const during = yield* Effect.promise(() =>
        fetch(`${base}/api/sessions`, { headers: { "x-api-key": TEST_KEY }, signal: AbortSignal.timeout(5000) })
          .then(async (response) => ({ status: response.status, body: await response.json() }))
          .catch((error: unknown) => ({ status: 0, body: String(error) })))
      expect(during.status, JSON.stringify(during.body)).toBe(503)
      expect(during.body).toMatchObject({ statusCode: 503, code: "SERVICE_UNAVAILABLE" })
      yield* Fiber.join(closing)
    }).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))
})
