/**
 * One client websocket: the noise transport plus what the peer learned about the client
 * (registering, or logged in as an account) and the peer's own outstanding iqs.
 */
import { randomBytes } from "node:crypto"
import type { BinaryNode } from "@whiskeysockets/baileys"
import { NoiseResponder, type ClientHello, type ServerCredentials } from "./frames.js"
import type { Account } from "./pairing.js"
import type { LinkCodeHello } from "./pairing-code.js"
import type { ClientKeys } from "./signal.js"

/**
 * One socket that logged in as an account, from the moment the peer accepted it until it closed:
 * what a test reads to tell whether an account was ever connected twice at once.
 */
export interface LoginRecord {
  readonly phone: string
  readonly device: number
  /** the socket was accepted (before the handshake), ms since the epoch */
  readonly openedAt: number
  /** `<success>` was sent */
  readonly loggedInAt: number
  /** the socket closed; undefined while it is open */
  closedAt: number | undefined
  /** the account's other logged-in sockets still open (not yet closed) at this login: 0 unless
   *  two clients hold the account at once */
  readonly concurrent: number
  /** of those, the ones the peer told `conflict/replaced` (the 440 a client sees) */
  readonly replaced: number
  /** the client's TCP port (to tell sockets apart in a failure message) */
  readonly remotePort: number | undefined
}

/** The slice of a `ws` WebSocket the peer uses (ws ships no types here). */
export interface RawSocket {
  readonly readyState: number
  /** the underlying TCP socket (`ws` exposes it as `_socket`) */
  readonly _socket?: {
    readonly remotePort?: number | undefined
    removeAllListeners(event: "data"): void
    on(event: "data", listener: (data: Buffer) => void): void
  } | undefined
  send(data: Buffer): void
  close(code?: number): void
  terminate(): void
  on(event: "message", listener: (data: Buffer) => void): void
  on(event: "close", listener: () => void): void
  on(event: "error", listener: (error: Error) => void): void
}

const OPEN = 1

export interface ConnectionHandlers {
  hello(conn: Connection, hello: ClientHello): void
  node(conn: Connection, node: BinaryNode): void
  closed(conn: Connection): void
}

export class Connection {
  readonly noise: NoiseResponder
  /** set once logged in */
  account: Account | undefined
  /** set while registering (showing QRs): the keys from the registration payload */
  registration: { noiseKey: Buffer; clientKeys: ClientKeys; refs: string[] } | undefined
  /** set when the registering client asked to link with a pairing code */
  linkCode: LinkCodeHello | undefined
  /** true between `<success>` and close */
  online = false
  closed = false
  /** set by `silence()`: the peer neither reads nor writes this socket any more, and keeps it open */
  silenced = false
  /** when the peer accepted the websocket (ms since the epoch) */
  readonly openedAt = Date.now()
  /** set on `<success>`: this socket's entry in the peer's `logins` (its close time is filled in) */
  login: LoginRecord | undefined
  /** messages written to this client and not yet receipted: redelivered after its next login
   *  if the socket goes away first */
  readonly unacked = new Map<string, (conn: Connection) => Promise<void>>()
  /** whose presence this socket subscribed to: phone → the JID it asked about (lost on close,
   *  like the server's subscriptions) */
  readonly presenceSubscriptions = new Map<string, string>()
  private readonly waiting = new Map<string, (node: BinaryNode) => void>()
  private idCounter = 0
  private readonly idPrefix = randomBytes(2).toString("hex")

  constructor(
    readonly socket: RawSocket,
    handlers: ConnectionHandlers,
    credentials: ServerCredentials
  ) {
    this.noise = new NoiseResponder(
      bytes => {
        if (this.socket.readyState === OPEN && !this.silenced) this.socket.send(bytes)
      },
      hello => handlers.hello(this, hello),
      node => {
        const waiter = node.tag === "iq" && node.attrs.id ? this.waiting.get(node.attrs.id) : undefined
        if (waiter && (node.attrs.type === "result" || node.attrs.type === "error")) {
          this.waiting.delete(node.attrs.id!)
          waiter(node)
        } else handlers.node(this, node)
      },
      () => this.terminate(),
      credentials
    )
    socket.on("message", data => this.noise.push(data))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      this.closed = true
      this.online = false
      handlers.closed(this)
    })
  }

  /** the websocket is open (not closing / closed) */
  get isOpen(): boolean {
    return !this.closed && this.socket.readyState === OPEN
  }

  nextId(): string {
    return `${this.idPrefix}.${++this.idCounter}`
  }

  send(node: BinaryNode): void {
    if (this.closed || this.silenced || this.socket.readyState !== OPEN) return
    this.noise.sendNode(node)
  }

  /** Send an iq and await the client's answer (rejects after `timeoutMs` or on close). */
  query(node: BinaryNode, timeoutMs = 10_000): Promise<BinaryNode> {
    const id = node.attrs.id ?? this.nextId()
    node.attrs.id = id
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        reject(new Error(`client did not answer iq ${id}`))
      }, timeoutMs)
      timer.unref()
      this.waiting.set(id, answer => {
        clearTimeout(timer)
        resolve(answer)
      })
      this.send(node)
    })
  }

  /** Send a terminal stanza (stream:error / failure) and let the client close; force it later. */
  sendAndHangUp(node: BinaryNode, graceMs = 2_000): void {
    this.send(node)
    this.online = false
    // closing right away could make the client see the socket close before it decoded the
    // stanza (decoding is async): let it close, terminate only if it does not
    setTimeout(() => this.terminate(), graceMs).unref()
  }

  /**
   * Go silent without closing, as a server that hangs or a network path that swallows everything
   * does: the TCP connection stays up (its bytes are still read off, so the client's own close is
   * seen), but nothing reaches the protocol (no pong, no iq answer, no reply to a close frame)
   * and nothing is written.
   */
  silence(): void {
    this.silenced = true
    const tcp = this.socket._socket
    tcp?.removeAllListeners("data")
    tcp?.on("data", () => undefined)
  }

  /** Abrupt close, no close frame. */
  terminate(): void {
    if (!this.closed) this.socket.terminate()
  }
}
