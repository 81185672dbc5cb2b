import { Curve, proto } from "@whiskeysockets/baileys"
import { verifyCurveSignature } from "./curveSignature.js"

/**
 * Who the Baileys engine will talk to: only a server that proves it is WhatsApp's. In the noise
 * handshake the server sends its static key and a certificate chain (an intermediate certificate
 * WhatsApp's root key signed, and a leaf certificate the intermediate signed); Baileys rc14 reads
 * them but its `Curve.verify` never fails, so anyone on the path (a hostile proxy included)
 * could pose as WhatsApp. This module makes the check real, once per process:
 *
 * - the chain must lead to the trusted root: the root signed the intermediate (issuer serial
 *   included), the intermediate signed the leaf;
 * - the leaf must certify the very static key the server used in the handshake (else a server
 *   could replay WhatsApp's genuine chain, which every client receives, with a key of its own);
 * - `Curve.verify` answers false for a bad signature, which also makes Baileys' own checks real:
 *   its copy of the chain check, and the phone's account signature on a pairing.
 *
 * A server that fails is refused inside the handshake, before the client sends its login or
 * registration payload: no credentials leave. The socket closes with `ServerIdentityInvalid`,
 * which the engine reports as the fatal `SERVER_IDENTITY_INVALID` (./disconnect.ts).
 *
 * Certificates' validity dates are not checked: WhatsApp's clients that check the chain
 * (whatsmeow, Baileys) do not read them either, and a skewed clock must not cut a session off.
 */

/** A root key server certificates must chain to, and the serial its intermediates name as issuer. */
export interface ServerRoot {
  readonly serial: number
  readonly publicKey: Uint8Array
}

/**
 * WhatsApp's root (WhatsAppLongTerm1), as Baileys (`WA_CERT_DETAILS`) and whatsmeow ship it. A
 * copy of our own: Baileys' object is exported and writable, and anything in the process could
 * change it.
 */
export const WHATSAPP_ROOT: ServerRoot = {
  serial: 0,
  publicKey: Buffer.from("142375574d0a587166aae71ebe516437c4a28b73e3695c6ce1f7f9545da8ee6b", "hex")
}

/**
 * For tests only: the loopback WhatsApp peer signs with a root of its own, which the test code
 * puts here (`globalThis[Symbol.for("switchboard.baileys.testServerRoot")] = { serial, publicKey }`,
 * in the test process or through a `node --import` preload in a gateway's, see
 * test/support/wa-peer/trust-peer-root.mjs). No setting or option reaches it: only code already
 * running in the process, which could as well replace this check.
 */
const TEST_SERVER_ROOT = Symbol.for("switchboard.baileys.testServerRoot")

/** The root server certificates must chain to: WhatsApp's, unless a test put the peer's. */
export const trustedServerRoot = (): ServerRoot =>
  ((globalThis as Record<symbol, unknown>)[TEST_SERVER_ROOT] as ServerRoot | undefined) ?? WHATSAPP_ROOT

/** The server did not prove it is WhatsApp's: the socket is closed before any credentials are sent. */
export class ServerIdentityInvalid extends Error {
  override readonly name = "ServerIdentityInvalid"
  constructor(readonly problem: string) {
    super(`the server is not WhatsApp's: ${problem}; refused before sending any credentials (is a proxy or the network intercepting the connection?)`)
  }
}

const Details = proto.CertChain.NoiseCertificate.Details

const detailsOf = (bytes: Uint8Array): proto.CertChain.NoiseCertificate.Details | undefined => {
  try {
    return Details.decode(bytes)
  } catch {
    return undefined
  }
}

const sameBytes = (a: Uint8Array | null | undefined, b: Uint8Array | undefined): boolean =>
  a != null && b !== undefined && a.length === b.length && Buffer.compare(a, b) === 0

/**
 * What is wrong with a server's certificate chain, given the static key the server used in the
 * handshake; undefined when the chain leads to `root` and certifies that key.
 */
export const serverCertificateProblem = (
  chain: proto.ICertChain,
  serverStaticKey: Uint8Array | undefined,
  root: ServerRoot
): string | undefined => {
  const { intermediate, leaf } = chain
  if (!intermediate?.details || !intermediate.signature || !leaf?.details || !leaf.signature) {
    return "its certificate chain is incomplete"
  }
  if (!verifyCurveSignature(root.publicKey, intermediate.details, intermediate.signature)) {
    return "its intermediate certificate is not signed by WhatsApp's root key"
  }
  const issuer = detailsOf(intermediate.details)
  if (issuer === undefined || (issuer.issuerSerial ?? 0) !== root.serial) {
    return "its intermediate certificate does not name WhatsApp's root as issuer"
  }
  if (!issuer.key || !verifyCurveSignature(issuer.key, leaf.details, leaf.signature)) {
    return "its certificate is not signed by its intermediate certificate"
  }
  const server = detailsOf(leaf.details)
  if (server === undefined || (server.issuerSerial ?? 0) !== (issuer.serial ?? 0)) {
    return "its certificate does not name its intermediate certificate as issuer"
  }
  if (!sameBytes(server.key, serverStaticKey)) {
    return "its certificate is for another key than the one it used in the handshake"
  }
  return undefined
}

let installed = false

/**
 * Puts the check into Baileys, once per process (Baileys' handshake code is shared by every
 * socket, so is the check): `Curve.verify` verifies, and decoding the server's certificate chain
 * checks it. The static key comes from the handshake's key agreement with it: Baileys' handshake
 * (`processHandshake`, synchronous) agrees on a key with the server's static key just before it
 * decodes the chain. Should a later Baileys change that order, the key seen would be another and
 * every server would be refused: the check fails closed, never open.
 */
export const installServerIdentityCheck = (): void => {
  if (installed) return
  installed = true
  Curve.verify = (publicKey, message, signature) => verifyCurveSignature(publicKey, message, signature)

  let lastAgreedWith: Uint8Array | undefined
  const sharedKey = Curve.sharedKey
  Curve.sharedKey = (privateKey, publicKey) => {
    lastAgreedWith = publicKey
    return sharedKey(privateKey, publicKey)
  }

  const decode = proto.CertChain.decode.bind(proto.CertChain)
  proto.CertChain.decode = (reader, length) => {
    const chain = decode(reader, length)
    const serverStaticKey = lastAgreedWith
    lastAgreedWith = undefined
    const problem = serverCertificateProblem(chain, serverStaticKey, trustedServerRoot())
    if (problem !== undefined) throw new ServerIdentityInvalid(problem)
    return chain
  }
}
