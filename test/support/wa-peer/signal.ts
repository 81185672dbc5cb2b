/**
 * A Signal participant held by the peer (a fake contact, or an account's phone): a real libsignal
 * identity, signed prekey and one-time prekeys, in-memory sessions, and the wire formats Baileys
 * speaks (`<user>` key bundles, the client's uploaded bundle).
 */
import { encodeBigEndian, getBinaryNodeChild, getBinaryNodeChildBuffer, getBinaryNodeChildren, type BinaryNode } from "@whiskeysockets/baileys"
import { ProtocolAddress, SessionBuilder, SessionCipher, SessionRecord, type SignalStorage } from "libsignal"
import * as curve from "libsignal/src/curve.js"
import { SenderKeys } from "./sender-keys.js"

interface KeyPair33 {
  readonly pubKey: Buffer
  readonly privKey: Buffer
}

const keyPair = (): KeyPair33 => {
  const { pubKey, privKey } = curve.generateKeyPair()
  return { pubKey: Buffer.from(pubKey), privKey: Buffer.from(privKey) }
}

/** 32-byte wire key → the 33-byte (type-prefixed) form libsignal wants. */
export const signalKey = (key: Uint8Array): Buffer => (key.length === 33 ? Buffer.from(key) : Buffer.concat([Buffer.from([5]), key]))
/** 33-byte libsignal key → 32-byte wire form. */
const wireKey = (key: Uint8Array): Buffer => Buffer.from(key.length === 33 ? key.subarray(1) : key)

/** A device's public bundle, as a session initiator needs it (libsignal's `E2ESession`). */
export interface Bundle {
  registrationId: number
  identityKey: Buffer
  signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer }
  preKey: { keyId: number; publicKey: Buffer }
}

/** The linked client's keys, as it announced them (registration payload + prekey uploads). */
export class ClientKeys {
  readonly preKeys = new Map<number, Buffer>()
  constructor(
    public registrationId: number,
    public identity: Buffer,
    public signedPreKey: { keyId: number; publicKey: Buffer; signature: Buffer }
  ) {}

  /** Store an `<iq xmlns=encrypt type=set>` prekey upload. */
  upload(iq: BinaryNode): number {
    const reg = getBinaryNodeChildBuffer(iq, "registration")
    if (reg) this.registrationId = Buffer.from(reg).readUInt32BE(0)
    const identity = getBinaryNodeChildBuffer(iq, "identity")
    if (identity) this.identity = Buffer.from(identity)
    const skey = getBinaryNodeChild(iq, "skey")
    if (skey) this.signedPreKey = parseSkey(skey)
    for (const key of getBinaryNodeChildren(getBinaryNodeChild(iq, "list"), "key")) {
      this.preKeys.set(readUInt(getBinaryNodeChildBuffer(key, "id")), Buffer.from(getBinaryNodeChildBuffer(key, "value")!))
    }
    return this.preKeys.size
  }

  /** Take one one-time prekey (the server hands each out once). */
  takeBundle(): Bundle {
    const first = this.preKeys.entries().next()
    if (first.done) throw new Error("the client has no one-time prekeys left on the peer")
    const [keyId, publicKey] = first.value
    this.preKeys.delete(keyId)
    return {
      registrationId: this.registrationId,
      identityKey: signalKey(this.identity),
      signedPreKey: { ...this.signedPreKey, publicKey: signalKey(this.signedPreKey.publicKey) },
      preKey: { keyId, publicKey: signalKey(publicKey) }
    }
  }
}

const readUInt = (buf: Uint8Array | undefined): number => {
  if (!buf) throw new Error("missing integer")
  return Buffer.from(buf).readUIntBE(0, buf.length)
}

export const parseSkey = (skey: BinaryNode) => ({
  keyId: readUInt(getBinaryNodeChildBuffer(skey, "id")),
  publicKey: Buffer.from(getBinaryNodeChildBuffer(skey, "value")!),
  signature: Buffer.from(getBinaryNodeChildBuffer(skey, "signature")!)
})

export class SignalParty implements SignalStorage {
  readonly identity = keyPair()
  /** its own group chains and those other senders distributed to it */
  readonly senderKeys = new SenderKeys()
  readonly registrationId = 1 + Math.floor(Math.random() * 16000)
  private readonly signedPreKey = { keyId: 1, keyPair: keyPair(), signature: Buffer.alloc(0) }
  private readonly preKeys = new Map<number, KeyPair33>()
  private nextPreKeyId = 1
  private readonly sessions = new Map<string, SessionRecord>()

  constructor() {
    this.signedPreKey.signature = Buffer.from(curve.calculateSignature(this.identity.privKey, this.signedPreKey.keyPair.pubKey))
  }

  /** The `<user jid=…>` node of an `<iq xmlns=encrypt type=get><key>` answer (one prekey consumed). */
  bundleNode(jid: string): BinaryNode {
    const id = this.nextPreKeyId++
    const preKey = keyPair()
    this.preKeys.set(id, preKey)
    return {
      tag: "user",
      attrs: { jid },
      content: [
        { tag: "registration", attrs: {}, content: encodeBigEndian(this.registrationId, 4) },
        { tag: "type", attrs: {}, content: Buffer.from([5]) },
        { tag: "identity", attrs: {}, content: wireKey(this.identity.pubKey) },
        {
          tag: "skey",
          attrs: {},
          content: [
            { tag: "id", attrs: {}, content: encodeBigEndian(this.signedPreKey.keyId, 3) },
            { tag: "value", attrs: {}, content: wireKey(this.signedPreKey.keyPair.pubKey) },
            { tag: "signature", attrs: {}, content: this.signedPreKey.signature }
          ]
        },
        {
          tag: "key",
          attrs: {},
          content: [
            { tag: "id", attrs: {}, content: encodeBigEndian(id, 3) },
            { tag: "value", attrs: {}, content: wireKey(preKey.pubKey) }
          ]
        }
      ]
    }
  }

  hasSession(address: string, device: number): boolean {
    return this.sessions.get(new ProtocolAddress(address, device).toString())?.haveOpenSession() ?? false
  }

  /** Encrypt for `address` (an opaque name of the client device), building a session from
   *  `bundle()` first when there is none. */
  async encrypt(address: string, device: number, plaintext: Buffer, bundle: () => Bundle): Promise<{ type: "pkmsg" | "msg"; ciphertext: Buffer }> {
    const addr = new ProtocolAddress(address, device)
    if (!this.sessions.get(addr.toString())?.haveOpenSession()) {
      await new SessionBuilder(this, addr).initOutgoing(bundle())
    }
    const { type, body } = await new SessionCipher(this, addr).encrypt(plaintext)
    return { type: type === 3 ? "pkmsg" : "msg", ciphertext: Buffer.from(body, "binary") }
  }

  async decrypt(address: string, device: number, type: string, ciphertext: Buffer): Promise<Buffer> {
    const cipher = new SessionCipher(this, new ProtocolAddress(address, device))
    return type === "pkmsg" ? cipher.decryptPreKeyWhisperMessage(ciphertext) : cipher.decryptWhisperMessage(ciphertext)
  }

  // --- libsignal storage ---
  async loadSession(id: string) {
    return this.sessions.get(id)
  }
  async storeSession(id: string, session: SessionRecord) {
    this.sessions.set(id, session)
  }
  isTrustedIdentity() {
    return true
  }
  async loadPreKey(id: number | string) {
    return this.preKeys.get(Number(id))
  }
  removePreKey(id: number) {
    this.preKeys.delete(id)
  }
  loadSignedPreKey() {
    return this.signedPreKey.keyPair
  }
  getOurRegistrationId() {
    return this.registrationId
  }
  getOurIdentity() {
    return this.identity
  }
}
