/**
 * The loopback WhatsApp Web peer: a websocket server on 127.0.0.1 that plays WhatsApp's server
 * and the phones of its accounts, for the real Baileys client. See ./index.ts for an overview.
 */
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { Curve, type BinaryNode, proto } from "@whiskeysockets/baileys"
import type { LoginRecord } from "./connection.js"
import { FakeContact, newMessageId, type ContactHost, type ReceivedMessage } from "./contacts.js"
import { peerCertificates } from "./frames.js"
import { sendFromContactToGroup } from "./group-messages.js"
import { readMedia, type DownloadedMedia } from "./media.js"
import { MediaServer } from "./media-server.js"
import { sendContactReceipt, sendFromParty } from "./messaging.js"
import { parseQr, type Account } from "./pairing.js"
import { primaryHello } from "./pairing-code.js"
import { listen, PeerServer, streamError, type ScanOptions, type WaPeerOptions } from "./server.js"
import type { Entity } from "./stanzas.js"
import { endNode, newCallId, offerNode, type CallEnd } from "./calls.js"
import { historyNotification, type PhoneChat, type SyncType } from "./history.js"
import { postStatusFromContact } from "./status.js"

export type { ScanOptions, WaPeerOptions } from "./server.js"

export class WaPeer extends PeerServer implements ContactHost {
  static async start(options: WaPeerOptions = {}): Promise<WaPeer> {
    peerCertificates() // make Baileys trust the peer's root before any client connects
    const host = options.host ?? "127.0.0.1"
    const peer = new WaPeer(await listen(host, options.port ?? 0), await MediaServer.start(host), options)
    peer.port = (peer.server.address() as AddressInfo).port
    peer.url = `ws://${host}:${peer.port}/ws/chat`
    return peer
  }

  /** The PEM certificate of the media server: clients must trust it for uploads
   *  (`fetchAgent: new https.Agent({ ca })`) and downloads (undici `Agent({ connect: { ca } })`). */
  get mediaCa(): string {
    return this.media.ca
  }

  /** `127.0.0.1:<port>` of the media server (the `media_conn` host). */
  get mediaHost(): string {
    return this.media.host
  }

  /**
   * What the recipient's phone sees of a media message a client sent: the blob fetched from the
   * media server, MAC and hashes checked, decrypted. Accepts a `ReceivedMessage` or a message.
   */
  downloadMedia(received: ReceivedMessage | proto.IMessage): Promise<DownloadedMedia> {
    const message = "toJid" in received ? received.message : received
    return readMedia(message, location => this.media.blob(location))
  }

  /** A party of the peer by phone number (a fake contact or an account), e.g. for `peer.groups`. */
  member(who: string | FakeContact): Entity {
    const entity = this.resolve(typeof who === "string" ? who : who.phone)
    if (!entity) throw new Error(`nobody with the number ${typeof who === "string" ? who : who.phone} on this peer`)
    return entity
  }

  /** The fake contact with this phone number (created on first use, with a fresh LID). */
  contact(phone: string, options: { name?: string; lid?: string } = {}): FakeContact {
    let contact = this.contacts.get(phone)
    if (!contact) {
      contact = new FakeContact(this, phone, options.name ?? `Contact ${phone}`, options.lid)
      this.contacts.set(phone, contact)
    }
    return contact
  }

  /**
   * The phone scans a QR Baileys showed: pairs that device to the account `phone` (created with a
   * LID if new). Resolves once the client signed the device identity and was told to restart (515).
   */
  async scan(qr: string, options: ScanOptions): Promise<Account> {
    const data = parseQr(qr)
    const conn = this.refs.get(data.ref)
    if (!conn?.isOpen || !conn.registration) throw new Error(`QR ref ${data.ref} is not live on this peer`)
    if (!conn.registration.noiseKey.equals(data.noiseKey)) throw new Error("QR noise key does not match the registering client")
    return this.link(conn, data, options, this.accounts.get(options.phone)?.accountKey ?? Curve.generateKeyPair())
  }

  /**
   * The user types the pairing code the client got from `sock.requestPairingCode(phone)` into the
   * phone `options.phone`: the phone answers the client's link-code hello, both derive the ADV
   * secret, and the device is paired as with a QR (then 515).
   */
  async enterCode(code: string, options: ScanOptions, timeoutMs = 5_000): Promise<Account> {
    const conn = [...this.connections].find(c => c.isOpen && c.registration && c.linkCode?.phone === options.phone)
    const hello = conn?.linkCode
    if (!conn || !hello) throw new Error(`no client is waiting for a pairing code for ${options.phone}`)
    const accountKey = this.accounts.get(options.phone)?.accountKey ?? Curve.generateKeyPair()
    const primary = await primaryHello(hello, code, accountKey)
    const finished = new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the client did not finish the code pairing")), timeoutMs)
      hello.finish = node => {
        clearTimeout(timer)
        resolve(node)
      }
    })
    conn.send(primary.notification(conn.nextId()))
    const { identityKey, advSecret } = primary.finish(await finished)
    return this.link(conn, { identityKey, advSecret }, options, accountKey)
  }

  /** Another client took over the session: stream:error conflict/replaced (Baileys: 440). */
  conflict(phone: string): void {
    for (const conn of this.live(this.accounts.get(phone))) {
      conn.sendAndHangUp(streamError({}, [{ tag: "conflict", attrs: { type: "replaced" } }]))
    }
  }

  /** Cut the account's sockets without a word (the client sees the connection close). */
  drop(phone: string): void {
    for (const conn of this.live(this.accounts.get(phone))) conn.terminate()
  }

  /**
   * The account's sockets go silent without closing (see `Connection.silence`): the client must
   * find out by itself that nobody answers its keep-alive pings. How many sockets went silent.
   */
  silence(phone: string): number {
    const sockets = this.live(this.accounts.get(phone))
    for (const conn of sockets) conn.silence()
    return sockets.length
  }

  /**
   * What a gateway in another process (`node dist/bundle/main.js`) needs to use this peer: WA_WS_URL,
   * the peer's noise root trusted by a preload (./trust-peer-root.mjs), and the media server's
   * certificate as an extra CA (uploads and downloads).
   */
  processEnv(): Record<string, string> {
    const preload = new URL("./trust-peer-root.mjs", import.meta.url).href
    return {
      WA_WS_URL: this.url,
      WA_PEER_ROOT_KEY: peerCertificates().rootPublicKey.toString("hex"),
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${preload}`].filter(Boolean).join(" "),
      NODE_EXTRA_CA_CERTS: fileURLToPath(new URL("./media-tls.cert.pem", import.meta.url))
    }
  }

  /** The account's logins so far, oldest first (see `logins`). */
  loginsOf(phone: string): LoginRecord[] {
    return this.logins.filter(login => login.phone === phone)
  }

  /** The account's logged-in sockets that are still open. */
  openLogins(phone: string): LoginRecord[] {
    return this.loginsOf(phone).filter(login => login.closedAt === undefined)
  }

  /** The most sockets logged in as the account at the same moment, ever (0 if it never logged in). */
  maxConcurrentLogins(phone: string): number {
    return Math.max(0, ...this.loginsOf(phone).map(login => login.concurrent + 1))
  }

  /** Is the account logged in on a connection right now? */
  isOnline(phone: string): boolean {
    return this.live(this.accounts.get(phone)).some(conn => this.ready.has(conn))
  }

  /**
   * The account's phone sends its history sync: `chats` (kept as what the phone holds, for
   * on-demand requests) in one HISTORY_SYNC_NOTIFICATION of `syncType` (default RECENT, progress
   * 100), delivered now or after the next login. Resolves with the notification's id.
   */
  async syncHistory(phone: string, chats: readonly PhoneChat[], options: { syncType?: SyncType; progress?: number } = {}): Promise<string> {
    const account = this.accounts.get(phone)
    if (!account?.linked) throw new Error(`no linked account ${phone} on this peer`)
    this.phoneHistory.set(phone, [...chats])
    return this.sendFromPhone(account, historyNotification(chats, { syncType: options.syncType ?? "RECENT", progress: options.progress ?? 100 }))
  }

  /** A contact rings the account `toPhone` (to its logged-in sockets, not queued); the call's id. */
  offerCall(from: FakeContact, toPhone: string, options: { isVideo?: boolean; callId?: string } = {}): string {
    const callId = options.callId ?? newCallId()
    if (this.tellAccount(toPhone, offerNode(from, callId, options.isVideo === true)) === 0) throw new Error(`account ${toPhone} is not online`)
    return callId
  }

  /** What became of the call: the caller hung up, it timed out, or the account's phone took or declined it. */
  endCall(from: FakeContact, toPhone: string, callId: string, end: CallEnd): void {
    if (this.tellAccount(toPhone, endNode(from, callId, end)) === 0) throw new Error(`account ${toPhone} is not online`)
  }

  /** A contact posts a text status update seen by the accounts `toPhones`; its message id. */
  async postStatus(from: FakeContact, toPhones: readonly string[], text: string): Promise<string> {
    const audience = toPhones.map(phone => {
      const account = this.accounts.get(phone)
      if (!account) throw new Error(`no account ${phone} on this peer`)
      return account
    })
    const id = newMessageId()
    await postStatusFromContact((account, id, write) => this.deliver(account, id, write), from, audience, { extendedTextMessage: { text } }, id)
    return id
  }

  /** Resolve with the first `event` payload matching `predicate` (rejects after `timeoutMs`). */
  waitFor<T>(event: string, predicate: (value: T) => boolean = () => true, timeoutMs = 5_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const listener = (value: T) => {
        if (!predicate(value)) return
        cleanup()
        resolve(value)
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`wa-peer: no '${event}' within ${timeoutMs} ms`))
      }, timeoutMs)
      const cleanup = () => {
        clearTimeout(timer)
        this.off(event, listener)
      }
      this.on(event, listener)
    })
  }

  async close(): Promise<void> {
    for (const conn of this.connections) conn.terminate()
    await Promise.all([new Promise<void>(resolve => this.server.close(() => resolve())), this.media.close()])
  }

  // --- ContactHost ---
  async deliverFromContact(contact: FakeContact, toPhone: string, message: proto.IMessage, id: string): Promise<void> {
    const account = this.accounts.get(toPhone)
    if (!account?.linked) throw new Error(`no linked account ${toPhone} on this peer`)
    await this.deliver(account, id, conn =>
      sendFromParty(conn, contact.party, account, message, {
        id,
        from: contact.lid,
        sender_pn: contact.jid,
        addressing_mode: "lid",
        notify: contact.name
      })
    )
  }

  async deliverToGroup(contact: FakeContact, groupJid: string, message: proto.IMessage, id: string): Promise<void> {
    await sendFromContactToGroup((account, id, write) => this.deliver(account, id, write), contact, this.groups.get(groupJid), message, id)
  }

  storeMedia(uploadType: string, encrypted: Buffer): { url: string; directPath: string } {
    return this.media.store(uploadType, encrypted)
  }

  tellAccount(phone: string, node: BinaryNode): number {
    const sockets = this.live(this.accounts.get(phone)).filter(conn => this.ready.has(conn))
    for (const conn of sockets) conn.send(node)
    return sockets.length
  }

  tellSubscribers(contact: FakeContact, node: (jid: string) => BinaryNode): number {
    const sockets = [...this.connections].filter(conn => conn.isOpen && this.ready.has(conn) && conn.presenceSubscriptions.has(contact.phone))
    for (const conn of sockets) conn.send(node(conn.presenceSubscriptions.get(contact.phone)!))
    return sockets.length
  }

  async receiptFromContact(message: ReceivedMessage, type?: string): Promise<void> {
    const conn = this.live(this.accounts.get(message.from)).find(c => this.ready.has(c))
    if (!conn) throw new Error(`account ${message.from} is not online`)
    sendContactReceipt(conn, message, type)
  }
}
