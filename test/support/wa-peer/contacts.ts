/**
 * Fake contacts: other WhatsApp users with a phone number, an assigned LID and a real libsignal
 * identity. They receive what linked clients send them (every kind, recorded whole) and can send
 * back text, media, stickers, locations, contact cards, polls and votes, reactions, edits,
 * revokes, pins, presence and chatstates.
 */
import { randomBytes } from "node:crypto"
import { encodeWAMessage, proto, unpadRandomMax16, type BinaryNode } from "@whiskeysockets/baileys"
import {
  contactsMessage,
  contentOf,
  editMessage,
  locationMessage,
  pinMessage,
  revokeMessage,
  type MessageKind,
  type OutgoingCard,
  type OutgoingLocation
} from "./kinds.js"
import { mediaMessage, type MediaKind, type OutgoingMedia } from "./media.js"
import { lidJid, newLidUser, pnJid, type Account } from "./pairing.js"
import { encryptPollVote, openPollVote, pollCreationMessage, pollOf, type Addressing, type OpenedVote, type PollParty } from "./polls.js"
import { chatstateNode, presenceNode, type Chatstate, type ClientPresence, type ContactPresence } from "./presence.js"
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
  /** the `<enc type>` it came in: `pkmsg` (it starts a new Signal session: a one-time prekey was
   *  used), `msg` (an existing session), `skmsg` (a group's sender key) */
  readonly enc: string
  /** what the message is (see ./kinds.ts); `message` holds it whole */
  readonly kind: MessageKind
  /** the stanza's `edit` attribute: "1" edit, "7" revoke ("8" by an admin), "2" pin */
  readonly edit: string | undefined
  /** the id of the message an edit, revoke, pin, reaction or poll vote is about */
  readonly target: string | undefined
  /** an edit's new text (or caption) */
  readonly editedText: string | undefined
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

/** A poll this contact created: what it needs to read the votes on it. */
export interface ContactPoll {
  readonly id: string
  readonly name: string
  readonly options: readonly string[]
  readonly selectableCount: number
  readonly secret: Buffer
}

/** A vote a linked client cast on a poll in its chat with this contact, opened with the poll's secret. */
export interface ReceivedVote extends OpenedVote {
  /** the vote message's id */
  readonly id: string
  readonly pollId: string
  /** the voting account's phone */
  readonly from: string
}

/** What a contact needs from the peer: delivering a stanza to an account's linked device. */
export interface ContactHost {
  readonly accounts: ReadonlyMap<string, Account>
  /** what linked clients said about presence (chatstates, subscriptions), in order */
  readonly presences: readonly ClientPresence[]
  deliverFromContact(contact: FakeContact, toPhone: string, message: proto.IMessage, id: string): Promise<void>
  deliverToGroup(contact: FakeContact, groupJid: string, message: proto.IMessage, id: string): Promise<void>
  receiptFromContact(message: ReceivedMessage, type?: string): Promise<void>
  /** put an encrypted blob on the media server (a phone's upload) */
  storeMedia(uploadType: string, encrypted: Buffer): { url: string; directPath: string }
  /** write a stanza to the account's logged-in sockets now (presence is not queued); how many */
  tellAccount(phone: string, node: BinaryNode): number
  /** write `node(jid)` to every socket subscribed to `contact`'s presence, `jid` as it asked; how many */
  tellSubscribers(contact: FakeContact, node: (jid: string) => BinaryNode): number
}

/** How a contact addresses what it sends: from its LID (the default, as in LID-addressed chats) or its phone JID. */
export interface AddressingOptions {
  readonly addressing?: Addressing
}

export class FakeContact {
  readonly party = new SignalParty()
  readonly lidUser: string
  /** messages linked clients sent this contact */
  readonly inbox: ReceivedMessage[] = []
  /** the polls this contact created, by message id */
  readonly polls = new Map<string, ContactPoll>()
  /** the presence the server tells subscribers (`setPresence`) */
  presence: ContactPresence = { type: "unavailable" }
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
    return this.sendMessage(toPhone, reactionMessage(pnJid(toPhone), targetId, emoji, this.wrote(targetId)), options)
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
    return this.sendMessageToGroup(groupJid, { conversation: text }, options)
  }

  /** Send any `proto.IMessage` to a group (e.g. `locationMessage(...)` from ./kinds.ts). */
  async sendMessageToGroup(groupJid: string, message: proto.IMessage, options: SendOptions = {}): Promise<string> {
    const id = options.id ?? newMessageId()
    this.sent.add(id)
    await this.host.deliverToGroup(this, groupJid, message, id)
    return id
  }

  /** Share a location (`locationMessage` with degreesLatitude / degreesLongitude, name, address, url). */
  async sendLocation(toPhone: string, location: OutgoingLocation, options: SendOptions = {}): Promise<string> {
    return this.sendMessage(toPhone, locationMessage(location), options)
  }

  /** Share contact cards: one is a `contactMessage`, several a `contactsArrayMessage` (vCard 3.0 with `waid`). */
  async sendContacts(toPhone: string, cards: readonly OutgoingCard[], options: SendOptions = {}): Promise<string> {
    return this.sendMessage(toPhone, contactsMessage(cards), options)
  }

  /** Send a sticker (a WebP, uploaded encrypted to the peer's media server like other media). */
  async sendSticker(toPhone: string, sticker: { bytes: Uint8Array; mimetype?: string; animated?: boolean }, options: SendOptions = {}): Promise<string> {
    return this.sendMedia(toPhone, { kind: "sticker", mimetype: "image/webp", ...sticker }, options)
  }

  /**
   * Create a poll (`pollCreationMessageV3` for one choice, `pollCreationMessage` for several) with
   * a fresh 32-byte `messageSecret` (or `poll.secret`); the contact keeps it to read the votes.
   */
  async sendPoll(
    toPhone: string,
    poll: { name: string; options: readonly string[]; selectableCount?: number; secret?: Uint8Array },
    options: SendOptions = {}
  ): Promise<string> {
    const { message, secret } = pollCreationMessage(poll)
    const id = options.id ?? newMessageId()
    this.polls.set(id, { id, name: poll.name, options: [...poll.options], selectableCount: poll.selectableCount ?? 1, secret })
    return this.sendMessage(toPhone, message, { id })
  }

  /**
   * Vote for `choices` (option texts; [] withdraws) on poll `pollId` in the chat with account
   * `toPhone`: a poll that account's client sent this contact (its secret comes from the received
   * message) or one this contact created. The `pollUpdateMessage` is sealed with the poll's
   * secret for creator and voter JIDs in `addressing` form (default "lid"; see ./polls.ts).
   */
  async vote(toPhone: string, pollId: string, choices: readonly string[], options: SendOptions & AddressingOptions = {}): Promise<string> {
    const poll = this.pollIn(pollId)
    const creator = poll.createdBy === "contact" ? this.pollParty : this.accountPollParty(toPhone)
    const form = options.addressing ?? "lid"
    const vote = encryptPollVote(choices, { pollId, secret: poll.secret, creatorJid: creator[form], voterJid: this.pollParty[form] })
    const message: proto.IMessage = {
      pollUpdateMessage: {
        pollCreationMessageKey: { remoteJid: pnJid(toPhone), fromMe: poll.createdBy === "contact", id: pollId },
        vote,
        senderTimestampMs: Date.now()
      }
    }
    return this.sendMessage(toPhone, message, options)
  }

  /** Edit a message this contact sent the account `toPhone` to `text` (MESSAGE_EDIT, as a phone wraps it). */
  async edit(toPhone: string, targetId: string, text: string, options: SendOptions = {}): Promise<string> {
    this.ownMessage(targetId)
    return this.sendMessage(toPhone, editMessage(pnJid(toPhone), targetId, text), options)
  }

  /** Delete for everyone a message this contact sent the account `toPhone` (protocolMessage REVOKE). */
  async revoke(toPhone: string, targetId: string, options: SendOptions = {}): Promise<string> {
    this.ownMessage(targetId)
    return this.sendMessage(toPhone, revokeMessage(pnJid(toPhone), targetId), options)
  }

  /** Pin (default for 24 h) or unpin a message of the chat with `toPhone`, the contact's or the client's. */
  async pin(toPhone: string, targetId: string, pin: { pinned?: boolean; durationSeconds?: number } = {}, options: SendOptions = {}): Promise<string> {
    const pinned = pin.pinned ?? true
    return this.sendMessage(toPhone, pinMessage(pnJid(toPhone), targetId, this.wrote(targetId), { pinned, durationSeconds: pin.durationSeconds }), options)
  }

  /**
   * The contact comes online or goes offline: the server tells every socket subscribed to its
   * presence (`<presence from type last>`), and answers later subscriptions with it. Resolves
   * with how many sockets were told.
   */
  setPresence(presence: ContactPresence): number {
    this.presence = presence
    return this.host.tellSubscribers(this, jid => presenceNode(jid, presence))
  }

  /** Typing / recording / paused in the chat with account `toPhone`: `<chatstate from><composing/>…`
   *  to its logged-in sockets now (not queued). Resolves with how many sockets were told. */
  sendChatstate(toPhone: string, state: Chatstate, options: AddressingOptions = {}): number {
    return this.host.tellAccount(toPhone, chatstateNode(options.addressing === "pn" ? this.jid : this.lid, state))
  }

  /** Every message linked clients sent this contact, decoded whole, oldest first. */
  received(): proto.IMessage[] {
    return this.inbox.map(m => m.message)
  }

  /** The chatstates linked clients sent in their chat with this contact, oldest first. */
  chatstates(): Chatstate[] {
    return this.host.presences.flatMap(p => (p.kind === "chatstate" && p.to === this.phone ? [p.state] : []))
  }

  /** The accounts (phones) whose clients subscribed to this contact's presence, in order. */
  subscribers(): string[] {
    return this.host.presences.flatMap(p => (p.kind === "subscribe" && p.to === this.phone ? [p.phone] : []))
  }

  /** The votes linked clients cast on polls in their chats with this contact, opened, oldest first. */
  votes(): ReceivedVote[] {
    return this.inbox.flatMap(received => {
      const update = contentOf(received.message).pollUpdateMessage
      const pollId = update?.pollCreationMessageKey?.id
      if (!update?.vote || !pollId) return []
      const poll = this.pollIn(pollId)
      const creator = poll.createdBy === "contact" ? this.pollParty : this.accountPollParty(received.from)
      const opened = openPollVote(update.vote, { id: pollId, ...poll }, creator, this.accountPollParty(received.from))
      return [{ ...opened, id: received.id, pollId, from: received.from }]
    })
  }

  /** Send any `proto.IMessage` (e.g. `{ extendedTextMessage: { text } }`). */
  async sendMessage(toPhone: string, message: proto.IMessage, options: SendOptions = {}): Promise<string> {
    const id = options.id ?? newMessageId()
    this.sent.add(id)
    await this.host.deliverFromContact(this, toPhone, message, id)
    return id
  }

  /** The contact's poll JIDs (no device). */
  private get pollParty(): PollParty {
    return { lid: this.lid, pn: this.jid }
  }

  private accountPollParty(phone: string): PollParty {
    const account = this.host.accounts.get(phone)
    if (!account) throw new Error(`no account ${phone} on this peer`)
    return { lid: lidJid(account.lidUser), pn: pnJid(account.phone) }
  }

  /** A poll in a chat of this contact: one it created, or one a client sent it. */
  private pollIn(pollId: string): { createdBy: "contact" | "account"; secret: Buffer; options: readonly string[] } {
    const own = this.polls.get(pollId)
    if (own) return { createdBy: "contact", secret: own.secret, options: own.options }
    const received = this.inbox.find(m => m.id === pollId)
    const poll = received ? pollOf(contentOf(received.message)) : undefined
    if (!poll?.secret) throw new Error(`${this.phone} knows no poll ${pollId} (with a messageSecret)`)
    return { createdBy: "account", secret: Buffer.from(poll.secret), options: poll.options }
  }

  /** Did this contact write message `id` (rather than receive it)? */
  private wrote(id: string): boolean {
    return this.sent.has(id) && !this.inbox.some(m => m.id === id)
  }

  private ownMessage(id: string): void {
    if (!this.wrote(id)) throw new Error(`${this.phone} did not send ${id}: only the sender edits or revokes a message`)
  }
}
