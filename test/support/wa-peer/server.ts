/**
 * The protocol side of the peer: peer state, accepting connections, login, pairing completion,
 * the client's iqs / messages / receipts. The public API lives in ./peer.ts.
 */
import { EventEmitter } from "node:events"
import { randomBytes } from "node:crypto"
import type { AddressInfo } from "node:net"
import { createRequire } from "node:module"
import { proto, type BinaryNode, type KeyPair } from "@whiskeysockets/baileys"
import { Connection, type LoginRecord, type RawSocket } from "./connection.js"
import type { FakeContact, ReceivedMessage } from "./contacts.js"
import { serverCredentials, type ClientHello, type ServerIdentity } from "./frames.js"
import { answerGroupIq } from "./group-iq.js"
import { handleClientGroupMessage } from "./group-messages.js"
import { GroupDirectory, type PeerGroup } from "./groups.js"
import { handleClientMessage, sendFromParty } from "./messaging.js"
import { lidJid, newLidUser, pairSuccessNode, pnJid, verifyPairDeviceSign, type Account, type QrData } from "./pairing.js"
import { handleClientPresence, type ClientPresence, type ContactPresence } from "./presence.js"
import { handleClientCall, type CallReject } from "./calls.js"
import { historyRequestOf, onDemandAnswer, type HistoryRequest, type PhoneChat } from "./history.js"
import { handleClientStatus, STATUS_JID, type ReceivedStatus } from "./status.js"
import { newMessageId } from "./contacts.js"
import { ClientKeys, SignalParty } from "./signal.js"
import { answerIq, type KeyQuery } from "./iq.js"
import { ProfileDirectory } from "./profiles.js"
import type { MediaServer } from "./media-server.js"
import type { Entity } from "./stanzas.js"

export interface WsServer {
  on(event: "connection", listener: (socket: RawSocket) => void): void
  once(event: "listening", listener: () => void): void
  once(event: "error", listener: (error: Error) => void): void
  address(): AddressInfo | string | null
  close(callback: () => void): void
}
// `ws` (a Baileys dependency) ships no types here: describe the slice we use
const { WebSocketServer } = createRequire(import.meta.url)("ws") as {
  WebSocketServer: new (options: { host: string; port: number; path: string }) => WsServer
}

/** A websocket server on `host:port` (0 = free port) at /ws/chat, once listening. */
export const listen = async (host: string, port: number): Promise<WsServer> => {
  const server = new WebSocketServer({ host, port, path: "/ws/chat" })
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve)
    server.once("error", reject)
  })
  return server
}

export interface WaPeerOptions {
  /** default 127.0.0.1 */
  readonly host?: string
  /** default 0 (a free port) */
  readonly port?: number
  /** QR refs per registration (each lives 60 s / 20 s in Baileys); default 6 */
  readonly qrRefs?: number
  /** after each login the account's phone sends a NO_HISTORY history-sync notification, which
   *  makes Baileys stop buffering events at once instead of after 20 s; default true */
  readonly historyNotice?: boolean
  /** delay of a contact's delivery receipt after the client's message; default 100 ms. At 0 the
   *  receipt lands while Baileys still buffers its own upsert, and the status is merged into that
   *  upsert (no messages.update) — the gateway must handle both */
  readonly receiptDelayMs?: number
  /** the oldest WhatsApp Web version (`[2, 3000, n]`) the peer lets in; an older client gets
   *  `<failure reason="405">`, as WhatsApp answers an outdated one; default: any */
  readonly minVersion?: readonly [number, number, number]
  /** how the peer proves it is the server in the noise handshake (see `ServerIdentity`): default
   *  `trusted`; `rogue-root` and `unbound-leaf` play a server posing as WhatsApp's */
  readonly serverIdentity?: ServerIdentity
}

export interface ScanOptions {
  /** the account's phone number (digits) */
  readonly phone: string
  /** its LID user (digits); default: a random one (kept when the number was linked before) */
  readonly lid?: string
  /** the phone's app: `smba` (WhatsApp Business for Android, the default) or e.g. `android` */
  readonly platform?: string
  /** the business's name (`<pair-success><biz name>`, Baileys' `creds.me.name`); default none,
   *  and then Baileys' `sendPresenceUpdate("available" | "unavailable")` sends nothing */
  readonly businessName?: string
  /** the `<pair-success>` carries an account signature made with another key than the account
   *  key it names (a forged or tampered pairing), which the client must refuse; default false */
  readonly forgedAccountSignature?: boolean
}

const now = (): string => `${Math.floor(Date.now() / 1000)}`
export const streamError = (attrs: Record<string, string>, content: BinaryNode[] = []): BinaryNode => ({ tag: "stream:error", attrs, content })

export class PeerServer extends EventEmitter {
  readonly accounts = new Map<string, Account>()
  readonly contacts = new Map<string, FakeContact>()
  /** every message a linked client sent to a fake contact, decrypted */
  readonly received: ReceivedMessage[] = []
  /** receipts/acks the clients sent for messages from contacts: `{ phone, id, type }` */
  readonly receipts: Array<{ readonly phone: string; readonly id: string; readonly type: string }> = []
  /** what clients said about presence: `<presence type>`, `<chatstate>`, subscriptions (./presence.ts) */
  readonly presences: ClientPresence[] = []
  /** sender key distributions clients sent group members (`to`: the member's phone number) */
  readonly distributions: Array<{ readonly group: string; readonly from: string; readonly to: string }> = []
  /** status updates clients posted, with their audience (./status.ts) */
  readonly statuses: ReceivedStatus[] = []
  /** call rejects clients sent (./calls.ts) */
  readonly callRejects: CallReject[] = []
  /** on-demand history requests clients sent their phones (./history.ts) */
  readonly historyRequests: HistoryRequest[] = []
  /** what each account's phone holds, by phone number: its history syncs and on-demand answers */
  readonly phoneHistory = new Map<string, PhoneChat[]>()
  /** the clients' key and device queries: each new Signal session they start begins here (./iq.ts) */
  readonly keyQueries: KeyQuery[] = []
  /** protocol problems the peer met (decryption failures, handler errors) */
  readonly errors: string[] = []
  readonly connections = new Set<Connection>()
  /** every login, in order: when its socket opened, logged in and closed (see `LoginRecord`) */
  readonly logins: LoginRecord[] = []
  /** sockets the peer accepted, and how many of them finished the noise handshake, that is sent
   *  the client's noise key and its login or registration payload (its credentials) */
  readonly handshakes = { accepted: 0, finished: 0 }
  /** the server's groups (./groups.ts): what clients query and change, and what contacts do */
  readonly groups: GroupDirectory
  /** abouts, pictures, business profiles and blocklists (./profiles.ts) */
  readonly profiles: ProfileDirectory
  protected readonly refs = new Map<string, Connection>()
  protected readonly queued = new Map<string, Array<(conn: Connection) => Promise<void>>>()
  protected readonly ready = new WeakSet<Connection>()
  url = ""
  port = 0
  readonly receiptDelayMs: number

  protected constructor(
    protected readonly server: WsServer,
    /** the HTTPS media server (uploads, downloads) the peer points clients to */
    readonly media: MediaServer,
    protected readonly options: WaPeerOptions
  ) {
    super()
    this.receiptDelayMs = options.receiptDelayMs ?? 100
    this.groups = new GroupDirectory({
      // after the iq's answer, like the server: the client hears of its own change second
      notify: (account, node) =>
        this.guard(() => this.deliver(account, node.attrs.id ?? "", async conn => conn.send(node)))
    })
    this.profiles = new ProfileDirectory({
      resolve: user => this.resolve(user),
      groups: this.groups,
      accounts: this.accounts,
      // WhatsApp's CDN serves pictures as plain JPEGs (no media key)
      storePicture: jpeg => media.store("image", jpeg).url,
      notify: (account, node) => this.guard(() => this.deliver(account, node.attrs.id ?? "", async conn => conn.send(node)))
    })
    server.on("connection", socket => this.accept(socket))
  }

  /**
   * Write a stanza to the account's linked device now, or after its next login when it is away;
   * written again after a reconnect until the client receipts or acks it.
   */
  async deliver(account: Account, id: string, write: (conn: Connection) => Promise<void>): Promise<void> {
    if (!account.linked) return
    const deliver = async (conn: Connection): Promise<void> => {
      conn.unacked.set(id, deliver)
      await write(conn)
    }
    const conn = this.live(account).find(c => this.ready.has(c))
    if (conn) await deliver(conn)
    else this.queued.set(account.phone, [...(this.queued.get(account.phone) ?? []), deliver])
  }

  group(jid: string): PeerGroup | undefined {
    return this.groups.groups.get(jid)
  }

  groupIq(account: Account, iq: BinaryNode): BinaryNode {
    return answerGroupIq(this.groups, user => this.resolve(user), account, iq)
  }

  /** The phone accepted the device: `<pair-success>`, check the client's signature, then 515. */
  protected async link(
    conn: Connection,
    qr: Pick<QrData, "identityKey" | "advSecret">,
    options: ScanOptions,
    accountKey: KeyPair
  ): Promise<Account> {
    const registration = conn.registration
    if (!registration) throw new Error("the connection is not registering")
    if (!registration.clientKeys.identity.equals(qr.identityKey)) throw new Error("identity key does not match the registering client")
    for (const ref of registration.refs) this.refs.delete(ref)
    const previous = this.accounts.get(options.phone)
    if (previous) this.unlink(options.phone)
    const account: Account = {
      phone: options.phone,
      lidUser: options.lid ?? previous?.lidUser ?? newLidUser(),
      accountKey,
      platform: options.platform ?? previous?.platform ?? "smba",
      businessName: options.businessName ?? previous?.businessName,
      phoneParty: previous?.phoneParty ?? new SignalParty(),
      device: (previous?.device ?? 0) + 1,
      noiseKey: registration.noiseKey,
      clientKeys: registration.clientKeys,
      linked: false
    }
    const reply = await conn.query(pairSuccessNode(account, qr, conn.nextId(), options.forgedAccountSignature))
    if (reply.attrs.type !== "result" || !verifyPairDeviceSign(account, reply)) {
      conn.sendAndHangUp(streamError({ code: "401" }))
      throw new Error("the client rejected the pairing or signed it wrongly")
    }
    account.linked = true
    this.accounts.set(account.phone, account)
    conn.registration = undefined
    conn.sendAndHangUp(streamError({ code: "515" }))
    this.emit("paired", account)
    return account
  }

  /** The server removes the linked device: the client gets stream:error 401 (device_removed). */
  unlink(phone: string): void {
    const account = this.accounts.get(phone)
    if (!account) return
    account.linked = false
    for (const conn of this.live(account)) {
      conn.sendAndHangUp(streamError({ code: "401" }, [{ tag: "conflict", attrs: { type: "device_removed" } }]))
    }
  }

  /** What the server says of a party's presence: a contact's last `setPresence`, an account is
   *  available while a client of it is logged in. */
  presenceOf(entity: Entity): ContactPresence {
    if (entity.kind === "contact") return entity.contact.presence
    return { type: this.live(entity.account).some(conn => this.ready.has(conn)) ? "available" : "unavailable" }
  }

  mediaConn(): BinaryNode {
    return this.media.mediaConnNode()
  }

  // --- connections ---
  protected live(account: Account | undefined): Connection[] {
    return [...this.connections].filter(c => account && c.account === account && c.isOpen)
  }

  resolve(user: string): Entity | undefined {
    for (const contact of this.contacts.values()) {
      if (contact.phone === user || contact.lidUser === user) {
        return { kind: "contact", contact }
      }
    }
    for (const account of this.accounts.values()) {
      if (account.phone === user || account.lidUser === user) return { kind: "account", account }
    }
    return undefined
  }

  private accept(socket: RawSocket): void {
    this.handshakes.accepted++
    const conn: Connection = new Connection(socket, {
      hello: (c, hello) => {
        this.handshakes.finished++
        this.guard(() => this.onHello(c, hello))
      },
      node: (c, node) => this.guard(() => this.onNode(c, node)),
      closed: c => {
        this.connections.delete(c)
        if (c.login) c.login.closedAt = Date.now()
        if (c.account && c.unacked.size > 0) {
          const account = c.account
          this.queued.set(account.phone, [...c.unacked.values(), ...(this.queued.get(account.phone) ?? [])])
          c.unacked.clear()
          // the client may already be back on a new socket
          const next = this.live(account).find(other => this.ready.has(other))
          if (next) this.guard(() => this.flushQueue(next, account))
        }
        for (const ref of c.registration?.refs ?? []) this.refs.delete(ref)
      }
    }, serverCredentials(this.options.serverIdentity ?? "trusted"))
    this.connections.add(conn)
  }

  protected guard(task: () => unknown): void {
    Promise.resolve()
      .then(task)
      .catch((error: unknown) => {
        this.errors.push(error instanceof Error ? (error.stack ?? error.message) : String(error))
        this.emit("peer-error", error)
      })
  }

  /** Whether a client's WhatsApp Web version is older than `minVersion`. */
  private outdated(appVersion: { primary?: number | null; secondary?: number | null; tertiary?: number | null } | null | undefined): boolean {
    const minimum = this.options.minVersion
    if (minimum === undefined) return false
    const given = [appVersion?.primary ?? 0, appVersion?.secondary ?? 0, appVersion?.tertiary ?? 0]
    for (let part = 0; part < 3; part++) {
      if (given[part]! !== minimum[part]) return given[part]! < minimum[part]!
    }
    return false
  }

  private onHello(conn: Connection, { noiseKey, payload }: ClientHello): void {
    if (this.outdated(payload.userAgent?.appVersion)) {
      conn.sendAndHangUp({ tag: "failure", attrs: { reason: "405", location: "peer" } })
      return
    }
    const reg = payload.devicePairingData
    if (reg?.eRegid && reg.eIdent && reg.eSkeyId && reg.eSkeyVal && reg.eSkeySig) {
      const clientKeys = new ClientKeys(Buffer.from(reg.eRegid).readUInt32BE(0), Buffer.from(reg.eIdent), {
        keyId: Buffer.from(reg.eSkeyId).readUIntBE(0, reg.eSkeyId.length),
        publicKey: Buffer.from(reg.eSkeyVal),
        signature: Buffer.from(reg.eSkeySig)
      })
      const refs = Array.from({ length: this.options.qrRefs ?? 6 }, () => `2@${randomBytes(24).toString("base64")}`)
      conn.registration = { noiseKey, clientKeys, refs }
      for (const ref of refs) this.refs.set(ref, conn)
      conn.send({
        tag: "iq",
        attrs: { from: "s.whatsapp.net", type: "set", id: conn.nextId(), xmlns: "md" },
        content: [{ tag: "pair-device", attrs: {}, content: refs.map(ref => ({ tag: "ref", attrs: {}, content: Buffer.from(ref) })) }]
      })
      this.emit("registering", conn)
      return
    }
    const phone = payload.username != null ? String(payload.username) : ""
    const account = this.accounts.get(phone)
    if (!account?.linked || account.device !== (payload.device ?? 0) || !account.noiseKey.equals(noiseKey)) {
      conn.sendAndHangUp({ tag: "failure", attrs: { reason: "401", location: "peer" } })
      return
    }
    const replaced = this.live(account)
    for (const other of replaced) {
      other.sendAndHangUp(streamError({}, [{ tag: "conflict", attrs: { type: "replaced" } }]))
    }
    // Counted by phone, not by `Account` object (relinking makes a new one), and up to the
    // socket's close: one told `replaced` but not gone yet still holds the account.
    const concurrent = [...this.connections].filter(c => c !== conn && !c.closed && c.login?.phone === account.phone).length
    conn.login = {
      phone: account.phone,
      device: account.device,
      openedAt: conn.openedAt,
      loggedInAt: Date.now(),
      closedAt: undefined,
      concurrent,
      replaced: replaced.length,
      remotePort: conn.socket._socket?.remotePort
    }
    this.logins.push(conn.login)
    conn.account = account
    conn.online = true
    conn.send({ tag: "success", attrs: { t: now(), lid: lidJid(account.lidUser, account.device), location: "peer", creation: now() } })
    this.emit("login", account)
  }

  /** After the client's login queries (its digest check is the last): offline marker, the
   *  phone's history notice, then whatever contacts sent while it was away. */
  async afterLogin(conn: Connection, account: Account): Promise<void> {
    if (this.ready.has(conn)) return
    this.ready.add(conn)
    conn.send({ tag: "ib", attrs: { from: "s.whatsapp.net" }, content: [{ tag: "offline", attrs: { count: "0" } }] })
    if (this.options.historyNotice !== false) {
      const notice: proto.IMessage = {
        protocolMessage: {
          type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
          historySyncNotification: { syncType: proto.Message.HistorySyncType.NO_HISTORY, progress: 100 }
        }
      }
      await sendFromParty(conn, account.phoneParty, account, notice, { from: pnJid(account.phone) })
    }
    await this.flushQueue(conn, account)
    this.emit("ready", account)
  }

  /** A message from the account's own phone to its linked device (history notifications); its id. */
  async sendFromPhone(account: Account, message: proto.IMessage): Promise<string> {
    const id = newMessageId()
    await this.deliver(account, id, conn => sendFromParty(conn, account.phoneParty, account, message, { from: pnJid(account.phone), id }))
    return id
  }

  /** The phone answers an on-demand history request from what it holds. */
  fromOwnDevice(account: Account, message: proto.Message): void {
    const request = historyRequestOf(account.phone, proto.Message.toObject(message, { longs: Number }) as proto.IMessage)
    if (!request) return
    this.historyRequests.push(request)
    this.emit("history-request", request)
    this.guard(() => this.sendFromPhone(account, onDemandAnswer(this.phoneHistory.get(account.phone) ?? [], request)))
  }

  private async flushQueue(conn: Connection, account: Account): Promise<void> {
    const pending = this.queued.get(account.phone) ?? []
    this.queued.delete(account.phone)
    for (const deliver of pending) await deliver(conn)
  }

  private async onNode(conn: Connection, node: BinaryNode): Promise<void> {
    const account = conn.account
    if (node.tag === "iq") return answerIq(this, conn, node)
    if (!account) return
    if (node.tag === "call") return handleClientCall(this, conn, account, node)
    if (node.tag === "message" && node.attrs.to === STATUS_JID) return handleClientStatus(this, conn, account, node)
    if (node.tag === "message") {
      return node.attrs.to?.endsWith("@g.us")
        ? handleClientGroupMessage(this, conn, account, node)
        : handleClientMessage(this, conn, account, node)
    }
    if (node.tag === "presence" || node.tag === "chatstate") return handleClientPresence(this, conn, account, node)
    if (node.tag === "receipt" || node.tag === "ack") conn.unacked.delete(node.attrs.id ?? "")
    if (node.tag === "receipt") {
      this.receipts.push({ phone: account.phone, id: node.attrs.id ?? "", type: node.attrs.type ?? "delivery" })
      this.emit("receipt", this.receipts[this.receipts.length - 1])
    }
  }
}
