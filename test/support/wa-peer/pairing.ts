/**
 * The fake phone's side of linking a device: accounts, QR parsing, the `<pair-success>` it makes
 * the server send, and the check of the client's `<pair-device-sign>` answer.
 */
import { randomBytes, randomInt } from "node:crypto"
import {
  Curve,
  getBinaryNodeChild,
  hmacSign,
  proto,
  WA_ADV_ACCOUNT_SIG_PREFIX,
  WA_ADV_DEVICE_SIG_PREFIX,
  type BinaryNode,
  type KeyPair
} from "@whiskeysockets/baileys"
import * as curve from "libsignal/src/curve.js"
import { ClientKeys, SignalParty, signalKey } from "./signal.js"

/** One WhatsApp account (a phone number) and the companion device linked to it. */
export interface Account {
  readonly phone: string
  /** the LID user (digits, no server) the peer assigned */
  readonly lidUser: string
  /** the ADV account key (the phone's identity) that signs linked devices */
  readonly accountKey: KeyPair
  /** the phone's app, as `<pair-success><platform name>` says: `smba` / `smbi` are WhatsApp
   *  Business (Android / iOS), `android` / `iphone` the consumer apps */
  readonly platform: string
  /** a WhatsApp Business account's name, sent as `<pair-success><biz name>`: Baileys makes it
   *  `creds.me.name`, without which it never sends `<presence type=available|unavailable>` */
  readonly businessName: string | undefined
  /** the phone itself (device 0) as a Signal participant */
  readonly phoneParty: SignalParty
  /** the linked companion's device number, its noise key and its Signal keys */
  device: number
  noiseKey: Buffer
  clientKeys: ClientKeys
  /** false once the device was unlinked / logged out: logins get `<failure reason=401>` */
  linked: boolean
}

export const pnJid = (phone: string, device?: number): string => `${phone}${device ? `:${device}` : ""}@s.whatsapp.net`
export const lidJid = (lidUser: string, device?: number): string => `${lidUser}${device ? `:${device}` : ""}@lid`
export const newLidUser = (): string => `${randomInt(100_000, 999_999)}${randomInt(100_000_000, 999_999_999)}`

/** The QR Baileys shows: `https://wa.me/settings/linked_devices#ref,noisePub,identityPub,advSecret,platform`. */
export interface QrData {
  readonly ref: string
  readonly noiseKey: Buffer
  readonly identityKey: Buffer
  readonly advSecret: Buffer
  readonly platform: string
}

export const parseQr = (qr: string): QrData => {
  const parts = qr.slice(qr.indexOf("#") + 1).split(",")
  if (parts.length < 4) throw new Error(`not a WhatsApp pairing QR: ${qr}`)
  const [ref, noise, identity, adv, platform] = parts as [string, string, string, string, string | undefined]
  return {
    ref,
    noiseKey: Buffer.from(noise, "base64"),
    identityKey: Buffer.from(identity, "base64"),
    advSecret: Buffer.from(adv, "base64"),
    platform: platform ?? ""
  }
}

/**
 * The `<iq><pair-success>` the server sends once the phone scanned: an ADV device identity the
 * account key signs (`[6,0] ‖ details ‖ identityPub`), HMAC'd with the QR's ADV secret.
 */
export const pairSuccessNode = (
  account: Account,
  qr: Pick<QrData, "identityKey" | "advSecret">,
  id: string,
  /** sign with another key than the account key the identity names, as a forger would */
  forged = false
): BinaryNode => {
  const details = proto.ADVDeviceIdentity.encode({
    rawId: randomBytes(4).readUInt32BE(0),
    timestamp: Math.floor(Date.now() / 1000),
    keyIndex: 1,
    accountType: proto.ADVEncryptionType.E2EE,
    deviceType: proto.ADVEncryptionType.E2EE
  }).finish()
  const accountSignature = Curve.sign(
    forged ? Curve.generateKeyPair().private : account.accountKey.private,
    Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, qr.identityKey])
  )
  const signed = proto.ADVSignedDeviceIdentity.encode({
    details,
    accountSignatureKey: account.accountKey.public,
    accountSignature
  }).finish()
  const deviceIdentity = proto.ADVSignedDeviceIdentityHMAC.encode({
    details: signed,
    hmac: hmacSign(signed, qr.advSecret),
    accountType: proto.ADVEncryptionType.E2EE
  }).finish()
  return {
    tag: "iq",
    attrs: { from: "s.whatsapp.net", type: "set", id, t: `${Math.floor(Date.now() / 1000)}` },
    content: [
      {
        tag: "pair-success",
        attrs: {},
        content: [
          { tag: "device-identity", attrs: {}, content: deviceIdentity },
          { tag: "platform", attrs: { name: account.platform } },
          ...(account.businessName !== undefined ? [{ tag: "biz", attrs: { name: account.businessName } }] : []),
          {
            tag: "device",
            attrs: { jid: pnJid(account.phone, account.device), lid: lidJid(account.lidUser, account.device) }
          }
        ]
      }
    ]
  }
}

/** Check the client's `<pair-device-sign>`: its device signature over `[6,1] ‖ details ‖ identity ‖ accountKey`. */
export const verifyPairDeviceSign = (account: Account, reply: BinaryNode): boolean => {
  const content = getBinaryNodeChild(getBinaryNodeChild(reply, "pair-device-sign"), "device-identity")?.content
  if (!(content instanceof Uint8Array)) return false
  const signed = proto.ADVSignedDeviceIdentity.decode(content)
  if (!signed.details || !signed.deviceSignature) return false
  const message = Buffer.concat([
    WA_ADV_DEVICE_SIG_PREFIX,
    signed.details,
    account.clientKeys.identity,
    account.accountKey.public
  ])
  // libsignal's verifySignature returns false on a bad signature (Baileys' Curve.verify only
  // catches throws, so it never fails): check the boolean here.
  return curve.verifySignature(signalKey(account.clientKeys.identity), message, signed.deviceSignature)
}
