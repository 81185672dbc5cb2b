/**
 * Linking with a pairing code instead of a QR (`sock.requestPairingCode(phone)`):
 *
 *  client → `<iq md><link_code_companion_reg stage=companion_hello>` with its ephemeral key wrapped
 *           under PBKDF2(code) ← server answers with a pairing ref
 *  phone  (the user types the code) → `<notification type=link_code_companion_reg>` with the
 *           phone's identity and its own ephemeral key wrapped under the code
 *  client → `<iq md><link_code_companion_reg stage=companion_finish>` with a key bundle encrypted
 *           under the shared ephemeral secret; both sides derive the ADV secret
 *  then the usual `<pair-success>`, signed and HMAC'd with that ADV secret.
 */
import { randomBytes } from "node:crypto"
import {
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  Curve,
  derivePairingCodeKey,
  getBinaryNodeChild,
  getBinaryNodeChildBuffer,
  hkdf,
  type BinaryNode,
  type KeyPair
} from "@whiskeysockets/baileys"
import type { QrData } from "./pairing.js"

/** What the client's `companion_hello` told the server. */
export interface LinkCodeHello {
  readonly phone: string
  readonly ref: string
  readonly wrappedCompanionEphemeral: Buffer
  readonly noiseKey: Buffer
  /** set by the phone once the code was entered: resolves with the client's `companion_finish` */
  finish?: (node: BinaryNode) => void
}

export const parseCompanionHello = (iq: BinaryNode): LinkCodeHello | undefined => {
  const reg = getBinaryNodeChild(iq, "link_code_companion_reg")
  if (reg?.attrs.stage !== "companion_hello") return undefined
  const wrapped = getBinaryNodeChildBuffer(reg, "link_code_pairing_wrapped_companion_ephemeral_pub")
  const noiseKey = getBinaryNodeChildBuffer(reg, "companion_server_auth_key_pub")
  if (!wrapped || !noiseKey) return undefined
  return {
    phone: (reg.attrs.jid ?? "").split("@")[0]!.split(":")[0]!,
    ref: randomBytes(16).toString("hex"),
    wrappedCompanionEphemeral: Buffer.from(wrapped),
    noiseKey: Buffer.from(noiseKey)
  }
}

/** The phone's side once the user typed `code`: the notification to send and a way to finish. */
export const primaryHello = async (hello: LinkCodeHello, code: string, accountKey: KeyPair) => {
  const wrapped = hello.wrappedCompanionEphemeral
  const companionEphemeral = aesDecryptCTR(
    wrapped.subarray(48, 80),
    await derivePairingCodeKey(code, wrapped.subarray(0, 32)),
    wrapped.subarray(32, 48)
  )
  const ephemeral = Curve.generateKeyPair()
  const salt = randomBytes(32)
  const iv = randomBytes(16)
  const wrappedPrimary = Buffer.concat([salt, iv, aesEncryptCTR(ephemeral.public, await derivePairingCodeKey(code, salt), iv)])
  const notification = (id: string): BinaryNode => ({
    tag: "notification",
    attrs: { from: "s.whatsapp.net", type: "link_code_companion_reg", id, t: `${Math.floor(Date.now() / 1000)}` },
    content: [
      {
        tag: "link_code_companion_reg",
        attrs: { stage: "primary_hello" },
        content: [
          { tag: "link_code_pairing_ref", attrs: {}, content: Buffer.from(hello.ref) },
          { tag: "primary_identity_pub", attrs: {}, content: accountKey.public },
          { tag: "link_code_pairing_wrapped_primary_ephemeral_pub", attrs: {}, content: wrappedPrimary }
        ]
      }
    ]
  })
  /** From the client's `companion_finish`: its identity and the ADV secret both sides derive. */
  const finish = (iq: BinaryNode): Pick<QrData, "identityKey" | "advSecret"> => {
    const reg = getBinaryNodeChild(iq, "link_code_companion_reg")
    const bundle = getBinaryNodeChildBuffer(reg, "link_code_pairing_wrapped_key_bundle")
    if (!bundle) throw new Error("companion_finish without a key bundle")
    const companionShared = Curve.sharedKey(ephemeral.private, companionEphemeral)
    const key = hkdf(companionShared, 32, {
      salt: bundle.subarray(0, 32),
      info: "link_code_pairing_key_bundle_encryption_key"
    })
    const plain = aesDecryptGCM(bundle.subarray(44), key, bundle.subarray(32, 44), Buffer.alloc(0))
    const identityKey = plain.subarray(0, 32)
    const random = plain.subarray(64, 96)
    const identityShared = Curve.sharedKey(accountKey.private, identityKey)
    const advSecret = Buffer.from(hkdf(Buffer.concat([companionShared, identityShared, random]), 32, { info: "adv_secret" }))
    return { identityKey: Buffer.from(identityKey), advSecret }
  }
  return { notification, finish }
}
