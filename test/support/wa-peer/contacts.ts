/**
 * Fake contacts: other WhatsApp users with a phone number, an assigned LID and a real libsignal
 * identity. They receive what linked clients send them and can send text, media and reactions back.
 */
import { randomBytes } from "node:crypto"
import { encodeWAMessage, proto, unpadRandomMax16, type BinaryNode } from "@whiskeysockets/baileys"
import { mediaMessage, type MediaKind, type OutgoingMedia } from "./media.js"
import { lidJid, newLidUser, pnJid, type Account } from "./pairing.js"
import { reactionMessage, type ReceivedReaction } from "./reactions.js"
import { SignalParty } from "./signal.js"

/** A message a linked client sent to a fake contact, as the contact decrypted it. */
export interface ReceivedMessage {
  /** the sending account's phone number */
  readonly from: string
  /** the recipient's phone number (a fake contact, or another account's phone) */
  readonly to: string
  /** the `to` of the stanza (phone JID or LID, as the client addressed it; the group's JID) */
  readonly toJid: string
  /** set when the message went to a group (`<id>@g.us`): `to` is then the member who decrypted it */
  readonly group: string | undefined
  readonly id: string
  /** conversation / extended text, when the message is text */
  readonly text: string | undefined
  /** the media kind, when the message carries media (`peer.downloadMedia(m)` gets the bytes) */
  readonly media: MediaKind | undefined
  /** set when the message is a reaction */
  readonly reaction: ReceivedReaction | undefined
  readonly message: proto.IMessage
}

export const newMessageId = (): string => `3EB0${randomBytes(8).toString("hex").toUpperCase()}`

/** The Signal address a party uses for a linked client (mirrors Baileys' `<lid>_1.<device>`). */
export const clientAddress = (account: Account): [string, number] => [`${account.lidUser}_1`, account.device]

/** Encrypt `message` from `party` to the account's linked device: the `<enc>` node. */
export const encryptFor = async (
  party: SignalParty,
  account: Account,
  message: proto.IMessage,
  attrs: Record<string, string> = {}
): Promise<BinaryNode> => {
  const [address, device] = clientAddress(account)
  const { type, ciphertext } = await party.encrypt(address, device, encodeWAMessage(message), () =>
    account.clientKeys.takeBundle()
  )
  return { tag: "enc", attrs: { v: "2", type, ...attrs }, content: ciphertext }
}

/** Decrypt an `<enc>` the account's linked device addressed to `party`. */
export const decryptFrom = async (party: SignalParty, account: Account, enc: BinaryNode): Promise<proto.Message> => {
  if (!(enc.content instanceof Uint8Array)) throw new Error("enc without ciphertext")
  const [address, device] = clientAddress(account)
  const plain = await party.decrypt(address, device, enc.attrs.type ?? "msg", Buffer.from(enc.content))
  return proto.Message.decode(unpadRandomMax16(plain))
}

export interface SendOptions {
  /** message id (default: a fresh `3EB0…` id) */
  readonly id?: string
}

/** What a contact needs from the peer: delivering a stanza to an account's linked device. */
export interface ContactHost {
  deliverFromContact(contact: FakeContact, toPhone: string, message: proto.IMessage, id: string): Promise<void>
  deliverToGroup(contact: FakeContact, groupJid: string, message: proto.IMessage, id: string): Promise<void>
  receiptFromContact(message: ReceivedMessage, type?: string): Promise<void>
  /** put an encrypted blob on the media server (a phone's upload) */
  storeMedia(uploadType: string, encrypted: Buffer): { url: string; directPath: string }
}

export class FakeContact {
  readonly party = new SignalParty()
  readonly lidUser: string
  /** messages linked clients sent this contact */
  readonly inbox: ReceivedMessage[] = []
  /** ids of the messages this contact sent */
  private readonly sent = new Set<string>()

  constructor(
    private readonly host: ContactHost,
    readonly phone: string,
    readonly name: string,
    lidUser?: string
  ) {
    this.lidUser = lidUser ?? newLidUser()
  }

  /** `<phone>@s.whatsapp.net` */
  get jid(): string {
    return pnJid(this.phone)
  }

  /** `<lid>@lid` */
  get lid(): string {
    return lidJid(this.lidUser)
  }

  /**
   * Send a text to the account with phone `toPhone`. It arrives as
   * `<message from=<lid>@lid sender_pn=<phone>@s.whatsapp.net addressing_mode=lid>` with a `pkmsg`
   * (first message) or `msg`. Resolves with the message id once written to the client's socket;
   * when the account has no live connection it is queued and delivered after its next login.
   */
  async send(toPhone: string, text: string, options: SendOptions = {}): Promise<string> {
    return this.sendMessage(toPhone, { conversation: text }, options)
  }

  /**
   * Send a photo, video, audio / voice note or document: encrypted like a phone does, stored on
   * the peer's media server, announced in an `image|video|audio|documentMessage` with url,
   * directPath, mediaKey and hashes. The client downloads it over HTTPS from the peer.
   */
  async sendMedia(toPhone: string, media: OutgoingMedia, options: SendOptions = {}): Promise<string> {
    return this.sendMessage(toPhone, await mediaMessage(media, (type, blob) => this.host.storeMedia(type, blob)), options)
  }

  /**
   * React with `emoji` ("" removes the reaction) to message `targetId` in the chat with account
   * `toPhone`: a message the account's client sent this contact, or one this contact sent.
   */
  async react(toPhone: string, targetId: string, emoji: string, options: SendOptions = {}): Promise<string> {
    const ownTarget = this.sent.has(targetId) && !this.inbox.some(m => m.id === targetId)
    return this.sendMessage(toPhone, reactionMessage(pnJid(toPhone), targetId, emoji, ownTarget), options)
  }

  /** The contact reads a message a client sent it (`<receipt type=read>`: Baileys status 4). */
  async read(messageId: string): Promise<void> {
    const message = this.inbox.find(m => m.id === messageId)
    if (!message) throw new Error(`${this.phone} never received ${messageId}`)
    await this.host.receiptFromContact(message, "read")
  }

  /**
   * Send a text to a group the contact is in (`peer.groups`): encrypted once with the contact's
   * sender key, to every member account's linked device (see ./group-messages.ts).
   */
  async sendToGroup(groupJid: string, text: string, options: SendOptions = {}): Promise<string> {
    const id = options.id ?? newMessageId()
    this.sent.add(id)
    await this.host.deliverToGroup(this, groupJid, { conversation: text }, id)
    return id
  }

  /** Send any `proto.IMessage` (e.g. `{ extendedTextMessage: { text } }`). */
  async sendMessage(toPhone: string, message: proto.IMessage, options: SendOptions = {}): Promise<string> {
    const id = options.id ?? newMessageId()
    this.sent.add(id)
    await this.host.deliverFromContact(this, toPhone, message, id)
    return id
  }
}
