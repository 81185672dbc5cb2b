import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Stream } from "effect"
import { createServer } from "node:net"
import { type AuthState, Engine, type EngineEvent } from "../src/runtime/Engine.js"
import { BaileysEngineLive, meOf } from "../src/runtime/engines/baileys/BaileysEngine.js"

const memoryAuth = (): AuthState & { readonly written: Array<unknown> } => {
  const written: Array<unknown> = []
  return {
    written,
    readCreds: Effect.succeed(Option.none()),
    writeCreds: (creds) => Effect.sync(() => void written.push(creds)),
    getKeys: () => Effect.succeed({}),
    setKeys: () => Effect.void,
    clear: Effect.void
  }
}

/** A port on 127.0.0.1 that nothing listens on (taken, then released). */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
)

describe("BaileysEngine (no peer)", () => {
  it.effect("is named baileys and mints ids in WhatsApp's own format", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      expect(engine.name).toBe("baileys")
      const ids = new Set(Array.from({ length: 50 }, () => engine.newMessageId()))
      expect(ids.size).toBe(50)
      for (const id of ids) expect(id).toMatch(/^3EB0[0-9A-F]{18}$/)
      yield* engine.forget("any")
    }).pipe(Effect.provide(BaileysEngineLive())))

  it.scoped("an unusable proxy URL fails connect, not transient, without the password", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      const error = yield* Effect.flip(engine.connect({
        sessionId: "s1",
        auth: memoryAuth(),
        lookupSent: () => Effect.succeed(Option.none()),
        proxyUrl: Option.some("ftp://user:topsecret@proxy.example:21")
      }))
      expect(error).toMatchObject({ code: "INVALID_PROXY", transient: false })
      expect(error.message).not.toContain("topsecret")
    }).pipe(Effect.provide(BaileysEngineLive())))

  it.scoped("a refused websocket ends the event stream with a retryable Closed", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const engine = yield* Effect.provide(Engine, BaileysEngineLive({ waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat` }))
      const connection = yield* engine.connect({
        sessionId: "s2",
        auth: memoryAuth(),
        lookupSent: () => Effect.succeed(Option.none()),
        proxyUrl: Option.none()
      })
      const events = yield* Stream.runCollect(connection.events).pipe(Effect.timeout("10 seconds"))
      const tags = [...events].map((event: EngineEvent) => event._tag)
      expect(tags.at(-1)).toBe("Closed")
      const closed = [...events].at(-1)
      expect(closed?._tag === "Closed" && closed.reason).toMatchObject({ kind: "retry", code: "CONNECTION_LOST" })
    }), 15_000)

  it("reads the account from creds.me", () => {
    expect(meOf({ id: "15551234567:12@s.whatsapp.net", lid: "99887766554433:12@lid", name: "Alice" })).toEqual({
      id: "15551234567@c.us",
      phone: "15551234567",
      lid: "99887766554433@lid",
      pushName: "Alice"
    })
    expect(meOf({ id: "15551234567@s.whatsapp.net" })).toEqual({ id: "15551234567@c.us", phone: "15551234567", lid: null, pushName: null })
    expect(meOf(undefined)).toBeNull()
  })
})
