/**
 * The Baileys engine linked to a loopback WhatsApp Web peer, at the engine boundary: a
 * connection's operations and every event it reported, with the real Baileys client underneath.
 * Credentials live in memory, written and read back as the Store does (JSON with BufferJSON).
 */
import { BufferJSON } from "@whiskeysockets/baileys"
import { Effect, Exit, ManagedRuntime, Option, Scope, Stream } from "effect"
import { defaultSessionSettings, type SessionSettings } from "../../src/domain/SessionSettings.js"
import { type AuthState, Engine, type EngineConnection, type EngineError, type EngineEvent } from "../../src/runtime/Engine.js"
import { BaileysEngineLive } from "../../src/runtime/engines/baileys/BaileysEngine.js"
import { afterAll, beforeAll } from "vitest"
import { type ScanOptions, startWaPeer, type WaPeer } from "./wa-peer/index.js"
import { muteSignalChatter } from "./wa-peer/raw-client.js"

export const memoryAuth = (): AuthState => {
  let creds: string | undefined
  const keys = new Map<string, unknown>()
  return {
    readCreds: Effect.sync(() => (creds === undefined ? Option.none() : Option.some(JSON.parse(creds, BufferJSON.reviver)))),
    writeCreds: (value) => Effect.sync(() => void (creds = JSON.stringify(value, BufferJSON.replacer))),
    getKeys: (type, ids) =>
      Effect.sync(() => Object.fromEntries(ids.flatMap((id) => (keys.has(`${type}/${id}`) ? [[id, keys.get(`${type}/${id}`)]] : [])))),
    setKeys: (changes) =>
      Effect.sync(() => {
        for (const [type, entries] of Object.entries(changes)) {
          for (const [id, value] of Object.entries(entries)) {
            if (value === null) keys.delete(`${type}/${id}`)
            else keys.set(`${type}/${id}`, value)
          }
        }
      }),
    clear: Effect.sync(() => {
      creds = undefined
      keys.clear()
    })
  }
}

/** A live engine connection, the scope it lives in, and every event it reported so far. */
export interface Linked {
  readonly connection: EngineConnection
  readonly scope: Scope.CloseableScope
  readonly events: Array<EngineEvent>
}

export type Tagged<T extends EngineEvent["_tag"]> = Extract<EngineEvent, { _tag: T }>

/** The first event (of all reported so far, or yet to come) matching `predicate`. */
export const eventOf = async <T extends EngineEvent["_tag"]>(
  linked: Linked,
  tag: T,
  predicate: (event: Tagged<T>) => boolean = () => true,
  timeoutMs = 10_000
): Promise<Tagged<T>> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = linked.events.find((e): e is Tagged<T> => e._tag === tag && predicate(e as never))
    if (found) return found
    if (Date.now() > deadline) throw new Error(`no ${tag} event matching within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The engine against `peer`: connections opened through it are closed with `close`. */
export const baileysAgainst = (peer: WaPeer) => {
  const runtime = ManagedRuntime.make(BaileysEngineLive({ waWebSocketUrl: peer.url, mediaCa: peer.mediaCa }))
  const scopes: Array<Scope.CloseableScope> = []

  const open = async (auth: AuthState, settings: SessionSettings): Promise<Linked> => {
    const scope = await Effect.runPromise(Scope.make())
    scopes.push(scope)
    const engine = await runtime.runPromise(Engine)
    const connection = await Effect.runPromise(Scope.extend(
      engine.connect({
        sessionId: "peer",
        auth,
        lookupSent: () => Effect.succeed(Option.none()),
        lookupPoll: () => Effect.succeed(Option.none()),
        proxyUrl: Option.none(),
        settings
      }),
      scope
    ))
    const events: Array<EngineEvent> = []
    Effect.runFork(Stream.runForEach(connection.events, (event) => Effect.sync(() => void events.push(event))))
    return { connection, scope, events }
  }

  return {
    /** QR → the phone scans → 515 → a new connection → Ready. */
    link: async (scan: ScanOptions, settings: SessionSettings = defaultSessionSettings("recent")): Promise<Linked> => {
      const auth = memoryAuth()
      const first = await open(auth, settings)
      const { qr } = await eventOf(first, "Qr")
      await peer.scan(qr, scan)
      await eventOf(first, "Closed", (e) => e.reason.kind === "restart")
      const linked = await open(auth, settings)
      await eventOf(linked, "Ready")
      return linked
    },
    run: <A>(effect: Effect.Effect<A, EngineError>) => runtime.runPromise(effect),
    refusal: (effect: Effect.Effect<unknown, EngineError>) =>
      runtime.runPromise(Effect.flip(effect)).then(({ code, refusal, transient }) => ({ code, refusal, transient })),
    close: async () => {
      for (const scope of scopes.reverse()) await Effect.runPromise(Scope.close(scope, Exit.void))
      await runtime.dispose()
    }
  }
}

/**
 * One linked engine for a whole `describe` block: the peer started before, everything closed
 * after. `event` waits on the linked connection (or on `on`).
 */
export const useLinkedBaileysEngine = (phone: string, options: Omit<ScanOptions, "phone"> = {}) => {
  let peer: WaPeer | undefined
  let engine: ReturnType<typeof baileysAgainst> | undefined
  let linked: Linked | undefined
  let unmute: (() => void) | undefined

  const current = () => {
    if (!linked) throw new Error("the engine has not been linked")
    return linked
  }

  beforeAll(async () => {
    unmute = muteSignalChatter()
    peer = await startWaPeer()
    engine = baileysAgainst(peer)
    linked = await engine.link({ phone, ...options }, defaultSessionSettings("off"))
  }, 30_000)

  afterAll(async () => {
    await engine?.close()
    await peer?.close()
    unmute?.()
  })

  return {
    peer: () => peer!,
    connection: () => current().connection,
    events: () => current().events,
    event: <T extends EngineEvent["_tag"]>(tag: T, predicate?: (event: Tagged<T>) => boolean, timeoutMs?: number, on: Linked = current()) =>
      eventOf(on, tag, predicate, timeoutMs),
    run: <A>(effect: Effect.Effect<A, EngineError>) => engine!.run(effect),
    refusal: (effect: Effect.Effect<unknown, EngineError>) => engine!.refusal(effect)
  }
}
