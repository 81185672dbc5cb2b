/**
 * WhatsApp Web transport, server side: the `WA\x06\x03` intro, 3-byte length-prefixed frames and
 * the Noise XX responder that mirrors Baileys' `Utils/noise-handler.js` (the initiator).
 *
 * Handshake (client = initiator, peer = responder):
 *   -> clientHello{ephemeral}                        h = H(mode) · header · e_c
 *   <- serverHello{ephemeral, enc(static), enc(certChain)}   ee, es
 *   -> clientFinish{enc(client noise static), enc(ClientPayload)} se
 * then both sides split the chaining key into the transport keys.
 */
import {
  aesDecryptGCM,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
  hkdf,
  NOISE_MODE,
  NOISE_WA_HEADER,
  proto,
  sha256,
  WA_CERT_DETAILS,
  type BinaryNode,
  type KeyPair
} from "@whiskeysockets/baileys"

const EMPTY = Buffer.alloc(0)

const iv = (counter: number): Buffer => {
  const out = Buffer.alloc(12)
  out.writeUInt32BE(counter, 8)
  return out
}

/** The certificate authority the loopback peer answers with: a root key that Baileys is told to
 *  trust (`WA_CERT_DETAILS.PUBLIC_KEY`, SERIAL 0, and the gateway's own check, see `TEST_SERVER_ROOT`),
 *  an intermediate it signs, and a leaf (the peer's noise static key) the intermediate signs. One per
 *  process: Baileys holds one trusted root. */
export interface PeerCertificates {
  /** the root public key: a Baileys in another process must be told to trust it
   *  (`WA_CERT_DETAILS.PUBLIC_KEY = rootPublicKey`) */
  readonly rootPublicKey: Buffer
  readonly staticKey: KeyPair
  readonly chain: Uint8Array
}

/** What the peer shows in the handshake: its static key and the certificate chain for it. */
export interface ServerCredentials {
  readonly staticKey: KeyPair
  readonly chain: Uint8Array
}

/**
 * Where the gateway's Baileys engine looks for a test's root instead of WhatsApp's
 * (src/runtime/engines/baileys/serverIdentity.ts); the peer and ./trust-peer-root.mjs put it there.
 */
export const TEST_SERVER_ROOT = Symbol.for("switchboard.baileys.testServerRoot")

/** A chain `root` → intermediate → a leaf certifying `leafKey`. */
const chainUnder = (root: KeyPair, leafKey: Uint8Array): Uint8Array => {
  const intermediate = Curve.generateKeyPair()
  const Details = proto.CertChain.NoiseCertificate.Details
  const intermediateDetails = Details.encode({
    serial: 1,
    issuerSerial: WA_CERT_DETAILS.SERIAL,
    key: intermediate.public,
    notBefore: 0,
    notAfter: 4_000_000_000
  }).finish()
  const leafDetails = Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: leafKey,
    notBefore: 0,
    notAfter: 4_000_000_000
  }).finish()
  return proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) }
  }).finish()
}

let certificates: PeerCertificates | undefined

export const peerCertificates = (): PeerCertificates => {
  if (certificates) return certificates
  const root = Curve.generateKeyPair()
  const staticKey = Curve.generateKeyPair()
  const chain = chainUnder(root, staticKey.public)
  // Baileys checks the intermediate against this exported, mutable object: trust our root.
  WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(root.public)
  WA_CERT_DETAILS.SERIAL = 0
  // and so does the gateway's engine, which does not read Baileys' object
  ;(globalThis as Record<symbol, unknown>)[TEST_SERVER_ROOT] = { serial: 0, publicKey: Buffer.from(root.public) }
  certificates = { rootPublicKey: Buffer.from(root.public), staticKey, chain }
  return certificates
}

/**
 * How a peer proves it is the server (`WaPeerOptions.serverIdentity`): `trusted` with the chain
 * under the root the test process trusts; `rogue-root` with a chain under a root of its own,
 * as a server posing as WhatsApp would; `unbound-leaf` with the trusted chain but another static
 * key, as a server replaying WhatsApp's genuine chain (every client receives it) would.
 */
export type ServerIdentity = "trusted" | "rogue-root" | "unbound-leaf"

export const serverCredentials = (identity: ServerIdentity): ServerCredentials => {
  const trusted = peerCertificates()
  if (identity === "trusted") return trusted
  const staticKey = Curve.generateKeyPair()
  if (identity === "rogue-root") return { staticKey, chain: chainUnder(Curve.generateKeyPair(), staticKey.public) }
  return { staticKey, chain: trusted.chain }
}

/** What the handshake learned about the client. */
export interface ClientHello {
  readonly noiseKey: Buffer
  readonly payload: proto.ClientPayload
}

/**
 * One connection's transport. Feed it the raw websocket bytes; it answers the handshake by itself
 * (through `write`), reports the client's static key + payload once, then decoded nodes.
 */
export class NoiseResponder {
  private hash: Buffer
  private salt: Buffer
  private key: Buffer
  private counter = 0
  private inBytes: Buffer = EMPTY
  private sawIntro = false
  private stage: "hello" | "finish" | "transport" = "hello"
  private readonly ephemeral = Curve.generateKeyPair()
  private transport: { enc: Buffer; dec: Buffer; read: number; write: number } | undefined
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private readonly write: (bytes: Buffer) => void,
    private readonly onHello: (hello: ClientHello) => void,
    private readonly onNode: (node: BinaryNode) => void,
    private readonly onError: (error: unknown) => void,
    private readonly credentials: ServerCredentials = peerCertificates()
  ) {
    const mode = Buffer.from(NOISE_MODE)
    this.hash = mode.byteLength === 32 ? mode : sha256(mode)
    this.salt = this.hash
    this.key = this.hash
    this.authenticate(NOISE_WA_HEADER)
  }

  /** Raw websocket data in (may hold several frames, or part of one). */
  push(data: Buffer): void {
    this.inBytes = Buffer.concat([this.inBytes, data])
    if (!this.sawIntro) {
      if (this.inBytes.length < 4) return
      if (!this.inBytes.subarray(0, 4).equals(NOISE_WA_HEADER)) {
        this.onError(new Error("bad intro header"))
        return
      }
      this.inBytes = this.inBytes.subarray(4)
      this.sawIntro = true
    }
    while (this.inBytes.length >= 3) {
      const size = (this.inBytes[0]! << 16) | (this.inBytes[1]! << 8) | this.inBytes[2]!
      if (this.inBytes.length < size + 3) return
      const frame = this.inBytes.subarray(3, size + 3)
      this.inBytes = this.inBytes.subarray(size + 3)
      // decoding is async (inflate); keep the frames in order
      this.chain = this.chain.then(() => this.onFrame(frame)).catch(this.onError)
    }
  }

  /** Encode, encrypt and frame a node for the client. */
  sendNode(node: BinaryNode): void {
    if (!this.transport) throw new Error("noise transport not ready")
    const t = this.transport
    this.writeFrame(aesEncryptGCM(encodeBinaryNode(node), t.enc, iv(t.write++), EMPTY))
  }

  private async onFrame(frame: Buffer): Promise<void> {
    if (this.stage === "transport") {
      const t = this.transport!
      const plain = aesDecryptGCM(frame, t.dec, iv(t.read++), EMPTY)
      this.onNode(await decodeBinaryNode(plain))
    } else if (this.stage === "hello") {
      this.serverHello(proto.HandshakeMessage.decode(frame))
    } else {
      this.clientFinish(proto.HandshakeMessage.decode(frame))
    }
  }

  private serverHello(msg: proto.HandshakeMessage): void {
    const clientEphemeral = msg.clientHello?.ephemeral
    if (!clientEphemeral) throw new Error("no clientHello")
    this.clientEphemeral = Buffer.from(clientEphemeral)
    const { staticKey, chain } = this.credentials
    this.authenticate(this.clientEphemeral)
    this.authenticate(this.ephemeral.public)
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, this.clientEphemeral))
    const encStatic = this.encrypt(staticKey.public)
    this.mixIntoKey(Curve.sharedKey(staticKey.private, this.clientEphemeral))
    const encPayload = this.encrypt(chain)
    this.stage = "finish"
    this.writeFrame(
      proto.HandshakeMessage.encode({
        serverHello: { ephemeral: this.ephemeral.public, static: encStatic, payload: encPayload }
      }).finish()
    )
  }

  private clientEphemeral: Buffer = EMPTY

  private clientFinish(msg: proto.HandshakeMessage): void {
    const finish = msg.clientFinish
    if (!finish?.static || !finish.payload) throw new Error("no clientFinish")
    const noiseKey = this.decrypt(finish.static)
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, noiseKey))
    const payload = proto.ClientPayload.decode(this.decrypt(finish.payload))
    const [write, read] = this.split(EMPTY)
    // the initiator encrypts with `write` and decrypts with `read`: mirror it
    this.transport = { enc: read, dec: write, read: 0, write: 0 }
    this.stage = "transport"
    this.onHello({ noiseKey, payload })
  }

  private writeFrame(data: Uint8Array): void {
    const header = Buffer.from([(data.length >>> 16) & 0xff, (data.length >>> 8) & 0xff, data.length & 0xff])
    this.write(Buffer.concat([header, data]))
  }

  private authenticate(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]))
  }

  private encrypt(plain: Uint8Array): Buffer {
    const out = aesEncryptGCM(plain, this.key, iv(this.counter++), this.hash)
    this.authenticate(out)
    return out
  }

  private decrypt(cipher: Uint8Array): Buffer {
    const out = aesDecryptGCM(cipher, this.key, iv(this.counter++), this.hash)
    this.authenticate(cipher)
    return out
  }

  private split(data: Uint8Array): [Buffer, Buffer] {
    const key = Buffer.from(hkdf(Buffer.from(data), 64, { salt: this.salt, info: "" }))
    return [key.subarray(0, 32), key.subarray(32)]
  }

  private mixIntoKey(data: Uint8Array): void {
    const [write, read] = this.split(data)
    this.salt = write
    this.key = read
    this.counter = 0
  }
}
