import { createPublicKey, verify } from "node:crypto"

/**
 * The check of a signature made with a Curve25519 (X25519) key, as WhatsApp and Signal sign:
 * the key is turned into its Ed25519 twin, whose sign bit the signer stored in the signature's
 * last bit, and Node's Ed25519 verifies. It replaces Baileys rc14's `Curve.verify`, which
 * answers true for any well-formed signature (it drops libsignal's false), so that the
 * server's certificates and the phone's pairing signature are really checked.
 *
 * The conversion is the birational map y = (u − 1) / (u + 1) mod 2^255 − 19, as libsignal's
 * curve25519-js does it; test/baileys-server-identity.test.ts checks it against libsignal.
 */

const P = (1n << 255n) - 19n
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")

const littleEndian = (bytes: Uint8Array): bigint => {
  let n = 0n
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!)
  return n
}

const power = (base: bigint, exponent: bigint): bigint => {
  let result = 1n
  for (let b = base % P, e = exponent; e > 0n; e >>= 1n, b = (b * b) % P) {
    if (e & 1n) result = (result * b) % P
  }
  return result
}

/** The Ed25519 public key of a Curve25519 one, with the given sign bit. */
const edwardsOf = (montgomery: Uint8Array, signBit: number): Buffer => {
  const u = littleEndian(montgomery) & ((1n << 255n) - 1n)
  // (u + 1)^(p − 2) is its inverse; for u = −1 it is 0, as in curve25519-js
  let y = (((u - 1n + P) % P) * power(u + 1n, P - 2n)) % P
  const out = Buffer.alloc(32)
  for (let i = 0; i < 32; i++, y >>= 8n) out[i] = Number(y & 0xffn)
  out[31]! |= signBit
  return out
}

/**
 * Whether `signature` (64 bytes) signs `message` under the Curve25519 `publicKey` (32 bytes, or
 * 33 with Signal's type byte 5 in front). Malformed input is simply not a valid signature.
 */
export const verifyCurveSignature = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
  const key = publicKey.length === 33 && publicKey[0] === 5 ? publicKey.subarray(1) : publicKey
  if (key.length !== 32 || signature.length !== 64) return false
  const edSignature = Buffer.from(signature)
  const signBit = edSignature[63]! & 0x80
  edSignature[63]! &= 0x7f
  try {
    const edKey = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, edwardsOf(key, signBit)]), format: "der", type: "spki" })
    return verify(null, message, edKey, edSignature)
  } catch {
    return false
  }
}
