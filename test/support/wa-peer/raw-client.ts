/**
 * Raw Baileys sockets against a WaPeer, for tests of the peer itself: in-memory auth, event
 * helpers, QR pairing, and a socket configured to trust the peer's media server.
 */
import { Agent as HttpsAgent } from "node:https"
import {
  BufferJSON,
  initAuthCreds,
  makeWASocket,
  type AuthenticationState,
  type BaileysEventMap,
  type ConnectionState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type UserFacingSocketConfig,
  type WASocket
} from "@whiskeysockets/baileys"
import type { ILogger } from "@whiskeysockets/baileys/lib/Utils/logger.js"
import { Agent as UndiciAgent } from "undici"
import { afterEach, beforeEach } from "vitest"
import { WaPeer } from "./peer.js"
import type { ScanOptions } from "./server.js"

export const STEP_MS = 5_000

export const silentLogger: ILogger = {
  level: "silent",
  child: () => silentLogger,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined
}

/** `initAuthCreds()` + a Map-backed key store: what the gateway keeps in its Store. */
export const memoryAuth = (): AuthenticationState => {
  const data = new Map<string, unknown>()
  const keys: SignalKeyStore = {
    get: <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const out: { [id: string]: SignalDataTypeMap[T] } = {}
      for (const id of ids) {
        const value = data.get(`${type}/${id}`)
        if (value !== undefined) out[id] = value as SignalDataTypeMap[T]
      }
      return out
    },
    set: (set: SignalDataSet) => {
      for (const [type, values] of Object.entries(set)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}/${id}`)
          else data.set(`${type}/${id}`, value)
        }
      }
    }
  }
  return { creds: initAuthCreds(), keys }
}

/** Persist and reload creds the way a store would (JSON with BufferJSON). */
export const reloadCreds = (auth: AuthenticationState): AuthenticationState => ({
  creds: JSON.parse(JSON.stringify(auth.creds, BufferJSON.replacer), BufferJSON.reviver),
  keys: auth.keys
})

/** The next `event` whose payload matches `predicate` (rejects after STEP_MS). */
export const onEvent = <E extends keyof BaileysEventMap>(
  sock: WASocket,
  event: E,
  predicate: (value: BaileysEventMap[E]) => boolean,
  what: string
): Promise<BaileysEventMap[E]> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), STEP_MS)
    const listener = (value: BaileysEventMap[E]) => {
      if (!predicate(value)) return
      clearTimeout(timer)
      sock.ev.off(event, listener)
      resolve(value)
    }
    sock.ev.on(event, listener)
  })

/** The next `connection.update` matching `predicate`. */
export const nextUpdate = (sock: WASocket, predicate: (u: Partial<ConnectionState>) => boolean, what: string) =>
  onEvent(sock, "connection.update", predicate, what)

export const statusCode = (update: Partial<ConnectionState>): number | undefined =>
  (update.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode

/** The raw sockets of one test, all pointed at `peer`; `end()` closes them. */
export class RawClients {
  private readonly sockets: WASocket[] = []
  /** trusts the peer's media server: pass as `options.dispatcher` to `downloadMediaMessage` */
  readonly dispatcher: UndiciAgent

  constructor(private readonly peer: WaPeer) {
    this.dispatcher = new UndiciAgent({ connect: { ca: peer.mediaCa } })
  }

  /** `{ dispatcher }` as Baileys' download / fetch options want it (a `RequestInit`). */
  get fetchOptions(): RequestInit {
    return { dispatcher: this.dispatcher } as unknown as RequestInit
  }

  /** A socket with the test defaults; uploads trust the peer's media CA unless `config` says otherwise. */
  connect(auth: AuthenticationState, config: Partial<UserFacingSocketConfig> = {}): WASocket {
    const sock = makeWASocket({
      waWebSocketUrl: this.peer.url,
      auth,
      logger: silentLogger,
      version: [2, 3000, 1],
      browser: ["Switchboard", "Chrome", "1.0"],
      syncFullHistory: false,
      markOnlineOnConnect: false,
      generateHighQualityLinkPreview: false,
      connectTimeoutMs: STEP_MS,
      qrTimeout: 30_000,
      fetchAgent: new HttpsAgent({ ca: this.peer.mediaCa }),
      // Node's global fetch reads `dispatcher`; lib.dom's RequestInit does not know it
      options: this.fetchOptions,
      ...config
    })
    this.sockets.push(sock)
    return sock
  }

  /** QR → the phone scans (with `scan`'s options) → 515 → reconnect → open. */
  async pair(phone: string, config: Partial<UserFacingSocketConfig> = {}, scan: Omit<ScanOptions, "phone"> = {}) {
    const auth = memoryAuth()
    const first = this.connect(auth, config)
    const { qr } = await nextUpdate(first, u => !!u.qr, "a QR")
    const restart = nextUpdate(first, u => u.connection === "close", "the 515 restart")
    await this.peer.scan(qr!, { ...scan, phone })
    const closed = await restart
    first.end(undefined)
    const sock = this.connect(auth, config)
    await nextUpdate(sock, u => u.connection === "open", "open after pairing")
    return { auth, sock, restartCode: statusCode(closed) }
  }

  async end(): Promise<void> {
    for (const sock of this.sockets.splice(0)) sock.end(undefined)
    await this.dispatcher.close()
  }
}

// libsignal narrates session switches on the console (both the client's and the contacts'
// copies run in this process): keep the test output readable.
const chatter = /^(Closing session|Opening session|Removing old closed session|Session already|Closing open session|Decrypted message with closed session)/

/** Mute libsignal's session chatter on console.info / console.warn; returns the undo. */
export const muteSignalChatter = (): (() => void) => {
  const { info, warn } = console
  const quiet =
    (write: (...args: unknown[]) => void) =>
    (...args: unknown[]) => {
      if (!(typeof args[0] === "string" && chatter.test(args[0]))) write(...args)
    }
  console.info = quiet(info)
  console.warn = quiet(warn)
  return () => {
    console.info = info
    console.warn = warn
  }
}

/**
 * A fresh peer and raw-client pool for every test of the calling file (libsignal's console
 * chatter muted meanwhile), read through the returned handle while a test runs.
 */
export const useRawPeer = (): { readonly peer: WaPeer; readonly clients: RawClients } => {
  let current: { peer: WaPeer; clients: RawClients; unmute: () => void } | undefined
  beforeEach(async () => {
    const unmute = muteSignalChatter()
    const peer = await WaPeer.start()
    current = { peer, clients: new RawClients(peer), unmute }
  })
  afterEach(async () => {
    if (current === undefined) return
    await current.clients.end()
    await current.peer.close()
    current.unmute()
    current = undefined
  })
  const started = () => {
    if (current === undefined) throw new Error("the loopback peer runs only during a test")
    return current
  }
  return {
    get peer() {
      return started().peer
    },
    get clients() {
      return started().clients
    }
  }
}
