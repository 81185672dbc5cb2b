/**
 * The Baileys engine itself (no gateway around it) linked to the loopback WhatsApp Web peer,
 * for a whole `describe` block: connections opened with in-memory credentials that round-trip
 * through JSON as the Store's do, every event they report kept for the test to wait on.
 */
import { BufferJSON } from "@whiskeysockets/baileys"
import { Effect, Exit, ManagedRuntime, Option, Scope, Stream } from "effect"
import { afterAll, beforeAll } from "vitest"
import { defaultSessionSettings } from "../../src/domain/SessionSettings.js"
import { type AuthState, Engine, type EngineConnection, type EngineError, type EngineEvent } from "../../src/runtime/Engine.js"
import { BaileysEngineLive } from "../../src/runtime/engines/baileys/BaileysEngine.js"
import { startWaPeer, type WaPeer } from "./wa-peer/index.js"
import { muteSignalChatter } from "./wa-peer/raw-client.js"

/** Credentials and keys in memory, written and read back as the Store does (JSON with BufferJSON). */
export const peerAuth = (): AuthState => {
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

/** A live engine connection and every event it reported so far. */
export interface LinkedEngine {
  readonly connection: EngineConnection
  readonly events: Array<EngineEvent>
}

export const useLinkedBaileysEngine = (phone: string, options: { readonly businessName?: string } = {}) => {
  let peer: WaPeer | undefined
  let runtime: ManagedRuntime.ManagedRuntime<Engine, never> | undefined
  let linked: LinkedEngine | undefined
  let unmute: (() => void) | undefined
  const scopes: Array<Scope.CloseableScope> = []

  const open = async (auth: AuthState): Promise<LinkedEngine> => {
    const scope = await Effect.runPromise(Scope.make())
    scopes.push(scope)
    const engine = await runtime!.runPromise(Engine)
    const connection = await Effect.runPromise(Scope.extend(
      engine.connect({
        sessionId: `peer-${phone}`,
        auth,
        lookupSent: () => Effect.succeedNone,
        lookupPoll: () => Effect.succeedNone,
        proxyUrl: Option.none(),
        settings: defaultSessionSettings("off")
      }),
      scope
    ))
    const events: Array<EngineEvent> = []
    Effect.runFork(Stream.runForEach(connection.events, (event) => Effect.sync(() => void events.push(event))))
    return { connection, events }
  }

  /** The first event (of all reported so far, or yet to come) matching `predicate`. */
  const event = async <T extends EngineEvent["_tag"]>(
    tag: T,
    predicate: (event: Extract<EngineEvent, { _tag: T }>) => boolean = () => true,
    timeoutMs = 10_000,
    on: LinkedEngine = current()
  ): Promise<Extract<EngineEvent, { _tag: T }>> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = on.events.find((e): e is Extract<EngineEvent, { _tag: T }> => e._tag === tag && predicate(e as never))
      if (found) return found
      if (Date.now() > deadline) throw new Error(`no ${tag} event matching within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  const current = () => {
    if (!linked) throw new Error("the engine has not been linked")
    return linked
  }

  beforeAll(async () => {
    unmute = muteSignalChatter()
    peer = await startWaPeer()
    runtime = ManagedRuntime.make(BaileysEngineLive({ waWebSocketUrl: peer.url, mediaCa: peer.mediaCa }))
    // QR → the phone scans → 515 → a new connection → Ready
    const auth = peerAuth()
    const first = await open(auth)
    const { qr } = await event("Qr", () => true, 10_000, first)
    await peer.scan(qr, { phone, ...options })
    await event("Closed", (e) => e.reason.kind === "restart", 10_000, first)
    const second = await open(auth)
    await event("Ready", () => true, 10_000, second)
    linked = second
  }, 30_000)

  afterAll(async () => {
    for (const scope of scopes.reverse()) await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime?.dispose()
    await peer?.close()
    unmute?.()
  })

  return {
    peer: () => peer!,
    connection: () => current().connection,
    events: () => current().events,
    event,
    run: <A>(effect: Effect.Effect<A, EngineError>) => runtime!.runPromise(effect),
    /** What an operation's refusal says: code, refusal, transience. */
    refusal: (effect: Effect.Effect<unknown, EngineError>) =>
      runtime!.runPromise(Effect.flip(effect)).then(({ code, refusal, transient }) => ({ code, refusal, transient }))
  }
}
