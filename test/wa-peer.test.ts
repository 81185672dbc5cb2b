/**
 * The loopback WhatsApp Web peer (test/support/wa-peer) against the REAL Baileys client: QR
 * pairing, restart login, sending with a delivery receipt, receiving, and the disconnect codes.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as curve from "libsignal/src/curve.js"
import {
  BufferJSON,
  Curve,
  WA_CERT_DETAILS,
  initAuthCreds,
  makeWASocket,
  proto,
  type AuthenticationState,
  type BaileysEventMap,
  type ConnectionState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type WASocket
} from "@whiskeysockets/baileys"
import type { ILogger } from "@whiskeysockets/baileys/lib/Utils/logger.js"
import { peerCertificates, startWaPeer, type WaPeer } from "./support/wa-peer/index.js"

const ALICE = "15551230001"
const BOB = "15551230002"
const STEP_MS = 5_000

const silent: ILogger = {
  level: "silent",
  child: () => silent,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined
}

/** `initAuthCreds()` + a Map-backed key store: what the gateway keeps in its Store. */
const memoryAuth = (): AuthenticationState => {
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
const reloadCreds = (auth: AuthenticationState): AuthenticationState => ({
  creds: JSON.parse(JSON.stringify(auth.creds, BufferJSON.replacer), BufferJSON.reviver),
  keys: auth.keys
})

const sockets: WASocket[] = []
let peer: WaPeer

const connect = (auth: AuthenticationState): WASocket => {
  const sock = makeWASocket({
    waWebSocketUrl: peer.url,
    auth,
    logger: silent,
    version: [2, 3000, 1],
    browser: ["Switchboard", "Chrome", "1.0"],
    syncFullHistory: false,
    markOnlineOnConnect: false,
    generateHighQualityLinkPreview: false,
    connectTimeoutMs: STEP_MS,
    qrTimeout: 30_000
  })
  sockets.push(sock)
  return sock
}

/** The next `connection.update` matching `predicate`. */
const nextUpdate = (sock: WASocket, predicate: (u: Partial<ConnectionState>) => boolean, what: string) =>
  onEvent(sock, "connection.update", predicate, what)

const onEvent = <E extends keyof BaileysEventMap>(
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

const statusCode = (update: Partial<ConnectionState>): number | undefined =>
  (update.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode

/** QR → the phone scans → 515 → reconnect → open. */
const pair = async (phone: string) => {
  const auth = memoryAuth()
  const first = connect(auth)
  const { qr } = await nextUpdate(first, u => !!u.qr, "a QR")
  const restart = nextUpdate(first, u => u.connection === "close", "the 515 restart")
  await peer.scan(qr!, { phone })
  const closed = await restart
  first.end(undefined)
  const sock = connect(auth)
  const opened = nextUpdate(sock, u => u.connection === "open", "open after pairing")
  await opened
  return { auth, sock, restartCode: statusCode(closed) }
}

// libsignal narrates session switches on the console (both the client's and the contacts'
// copies run in this process): keep the test output readable.
const chatter = /^(Closing session|Opening session|Removing old closed session|Session already|Closing open session|Decrypted message with closed session)/
const consoleInfo = console.info
const consoleWarn = console.warn
const quiet =
  (write: (...args: unknown[]) => void) =>
  (...args: unknown[]) => {
    if (!(typeof args[0] === "string" && chatter.test(args[0]))) write(...args)
  }

beforeEach(async () => {
  console.info = quiet(consoleInfo)
  console.warn = quiet(consoleWarn)
  peer = await startWaPeer()
})

afterEach(async () => {
  for (const sock of sockets.splice(0)) sock.end(undefined)
  await peer.close()
  console.info = consoleInfo
  console.warn = consoleWarn
})

describe("wa-peer: linking", () => {
  it("serves a noise certificate chain that verifies against the root Baileys is told to trust", () => {
    // Baileys rc14's Curve.verify never fails (libsignal returns false, it only catches throws),
    // so check the chain here with libsignal's boolean result
    const verify = (key: Uint8Array, message: Uint8Array, signature: Uint8Array) =>
      curve.verifySignature(Buffer.concat([Buffer.from([5]), key]), message, signature)
    const { intermediate, leaf } = proto.CertChain.decode(peerCertificates().chain)
    const details = proto.CertChain.NoiseCertificate.Details.decode(intermediate!.details!)
    expect(details.issuerSerial).toBe(WA_CERT_DETAILS.SERIAL)
    expect(verify(WA_CERT_DETAILS.PUBLIC_KEY, intermediate!.details!, intermediate!.signature!)).toBe(true)
    expect(verify(details.key!, leaf!.details!, leaf!.signature!)).toBe(true)
    expect(verify(Curve.generateKeyPair().public, intermediate!.details!, intermediate!.signature!)).toBe(false)
  })

  it("pairs through the QR, restarts on 515, logs in and sets creds.me", async () => {
    const { auth, sock, restartCode } = await pair(ALICE)
    expect(restartCode).toBe(515)
    const account = peer.accounts.get(ALICE)!
    expect(auth.creds.me?.id).toBe(`${ALICE}:${account.device}@s.whatsapp.net`)
    expect(auth.creds.me?.lid).toBe(`${account.lidUser}:${account.device}@lid`)
    expect(auth.creds.account?.accountSignatureKey).toBeTruthy()
    expect(sock.user?.id).toBe(auth.creds.me?.id)
    // the client uploaded its prekeys to the peer
    expect(account.clientKeys.preKeys.size).toBeGreaterThan(0)
    expect(peer.errors).toEqual([])
  })

  it("logs in again from saved creds without a QR", async () => {
    const { auth, sock } = await pair(ALICE)
    sock.end(undefined)
    const again = connect(reloadCreds(auth))
    let sawQr = false
    again.ev.on("connection.update", u => {
      if (u.qr) sawQr = true
    })
    await nextUpdate(again, u => u.connection === "open", "open from saved creds")
    expect(sawQr).toBe(false)
    expect(peer.isOnline(ALICE)).toBe(true)
  })

  it("links with a pairing code (requestPairingCode) instead of the QR", async () => {
    const auth = memoryAuth()
    const first = connect(auth)
    await nextUpdate(first, u => !!u.qr, "the first QR")
    const asked = peer.waitFor("pairing-code", phone => phone === ALICE)
    const code = await first.requestPairingCode(ALICE)
    await asked
    const restart = nextUpdate(first, u => u.connection === "close", "the 515 restart")
    const account = await peer.enterCode(code, { phone: ALICE })
    expect(statusCode(await restart)).toBe(515)
    first.end(undefined)
    const sock = connect(auth)
    await nextUpdate(sock, u => u.connection === "open", "open after code pairing")
    expect(auth.creds.me?.id).toBe(`${ALICE}:${account.device}@s.whatsapp.net`)
    expect(auth.creds.registered).toBe(true)
    // the code is spent: nobody waits for it any more
    await expect(peer.enterCode(code, { phone: ALICE })).rejects.toThrow(/no client is waiting/)
  })

  it("answers onWhatsApp from its directory, and sock.logout() unlinks the device", async () => {
    const { auth, sock } = await pair(ALICE)
    const bob = peer.contact(BOB)
    const found = await sock.onWhatsApp(BOB, "15559999999")
    expect(found).toEqual([{ jid: bob.jid, exists: true }])
    const closed = nextUpdate(sock, u => u.connection === "close", "close on logout")
    await sock.logout()
    expect(statusCode(await closed)).toBe(401)
    await expect.poll(() => peer.accounts.get(ALICE)?.linked).toBe(false)
    const again = connect(reloadCreds(auth))
    expect(statusCode(await nextUpdate(again, u => u.connection === "close", "refused login"))).toBe(401)
  })

  it("refuses creds of a device that was unlinked (401 at login)", async () => {
    const { auth, sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close on unlink")
    peer.unlink(ALICE)
    expect(statusCode(await closed)).toBe(401)
    const again = connect(reloadCreds(auth))
    const refused = await nextUpdate(again, u => u.connection === "close", "refused login")
    expect(statusCode(refused)).toBe(401)
  })
})

describe("wa-peer: messages", () => {
  it("delivers a text to a contact's phone JID and reports DELIVERY_ACK", async () => {
    const { sock } = await pair(ALICE)
    const bob = peer.contact(BOB)
    const delivered = onEvent(
      sock,
      "messages.update",
      updates => updates.some(u => u.update.status === proto.WebMessageInfo.Status.DELIVERY_ACK),
      "the delivery receipt"
    )
    const received = peer.waitFor<{ text?: string }>("received", m => m.text === "hello bob")
    const sent = await sock.sendMessage(bob.jid, { text: "hello bob" })
    const message = await received
    expect(message).toMatchObject({ from: ALICE, to: BOB, toJid: bob.jid, id: sent?.key.id, text: "hello bob" })
    const updates = await delivered
    expect(updates.find(u => u.update.status === 3)?.key).toMatchObject({ id: sent?.key.id, remoteJid: bob.jid, fromMe: true })
    expect(bob.inbox.map(m => m.text)).toEqual(["hello bob"])
    // the contact reads it: status 4 (READ)
    const read = onEvent(
      sock,
      "messages.update",
      updates => updates.some(u => u.key.id === sent?.key.id && u.update.status === proto.WebMessageInfo.Status.READ),
      "the read receipt"
    )
    await bob.read(sent!.key.id!)
    await read
    // a second message rides the established session (type msg, no new prekey fetch)
    const second = peer.waitFor<{ text?: string }>("received", m => m.text === "again")
    await sock.sendMessage(bob.jid, { text: "again" })
    await second
    expect(peer.errors).toEqual([])
  })

  it("receives a contact's Signal message from its LID with the phone JID as the alternate", async () => {
    const { sock } = await pair(ALICE)
    const bob = peer.contact(BOB, { name: "Bob" })
    const upsert = onEvent(sock, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "hi alice"), "the upsert")
    const id = await bob.send(ALICE, "hi alice")
    const { messages, type } = await upsert
    const message = messages.find(m => m.message?.conversation === "hi alice")!
    expect(type).toBe("notify")
    expect(message.key).toMatchObject({ id, fromMe: false, remoteJid: bob.lid, remoteJidAlt: bob.jid })
    expect(message.pushName).toBe("Bob")
    // the client answers the contact with a delivery receipt
    await peer.waitFor<{ id: string }>("receipt", r => r.id === id)
    // and a reply on the now established session decrypts at the contact
    const reply = peer.waitFor<{ text?: string }>("received", m => m.text === "hi bob")
    await sock.sendMessage(bob.jid, { text: "hi bob" })
    await reply
    expect(peer.errors).toEqual([])
  })

  it("a message to another account of the peer reaches that account's phone", async () => {
    const alice = await pair(ALICE)
    await pair("15551230003")
    const received = peer.waitFor<{ text?: string; to: string }>("received", m => m.text === "hi carol")
    await alice.sock.sendMessage("15551230003@s.whatsapp.net", { text: "hi carol" })
    expect(await received).toMatchObject({ from: ALICE, to: "15551230003" })
    expect(peer.errors).toEqual([])
  })

  it("delivers messages sent while the client was away after its next login", async () => {
    const { auth, sock } = await pair(ALICE)
    sock.end(undefined)
    const bob = peer.contact(BOB)
    await bob.send(ALICE, "while you were out")
    const again = connect(reloadCreds(auth))
    const upsert = await onEvent(again, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "while you were out"), "the queued message")
    expect(upsert.messages[0]?.key.remoteJid).toBe(bob.lid)
  })
})

describe("wa-peer: disconnects", () => {
  it("unlink → 401 loggedOut", async () => {
    const { sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close")
    peer.unlink(ALICE)
    expect(statusCode(await closed)).toBe(401)
  })

  it("conflict → 440 connectionReplaced", async () => {
    const { sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close")
    peer.conflict(ALICE)
    expect(statusCode(await closed)).toBe(440)
  })

  it("drop → the socket closes with a retryable code, and the client can log in again", async () => {
    const { auth, sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close")
    peer.drop(ALICE)
    const code = statusCode(await closed)
    expect(code).not.toBe(401)
    expect(code).not.toBe(440)
    expect(code).toBe(428)
    const again = connect(auth)
    await nextUpdate(again, u => u.connection === "open", "open after the drop")
  })

  it("a second socket with the same creds replaces the first (440 on the old one)", async () => {
    const { auth, sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close of the old socket")
    const second = connect(auth)
    await nextUpdate(second, u => u.connection === "open", "open of the new socket")
    expect(statusCode(await closed)).toBe(440)
  })
})
