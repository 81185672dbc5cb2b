/**
 * Message traffic between linked clients and the peer's Signal parties (contacts, phones).
 */
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, proto, type BinaryNode } from "@whiskeysockets/baileys"
import type { Connection } from "./connection.js"
import { decryptFrom, encryptFor, newMessageId, type ReceivedMessage } from "./contacts.js"
import { contentOf, editedTextOf, kindOf, stanzaEdit, targetOf } from "./kinds.js"
import { mediaOf } from "./media.js"
import type { Account } from "./pairing.js"
import { reactionOf } from "./reactions.js"
import type { SignalParty } from "./signal.js"
import { textOf, type Entity } from "./stanzas.js"

const now = (): string => `${Math.floor(Date.now() / 1000)}`

/**
 * The stanza's `<message type>`, its `<enc>` extras and its own extra attributes, as WhatsApp (and
 * Baileys' own getMessageType / getMediaType) set them: `reaction` (+ `decrypt-fail=hide`), `poll`
 * (creations and votes), `media` (+ `mediatype=image|video|ptt|audio|document|sticker|vcard|
 * contact_array`) or `text`; `edit=1|7|2` on edits, revokes and pins. Baileys ignores them on receipt.
 */
export const stanzaKind = (message: proto.IMessage): { type: string; enc: Record<string, string>; attrs: Record<string, string> } => {
  const attrs = stanzaEdit(message)
  const content = contentOf(message)
  if (content.reactionMessage) return { type: "reaction", enc: { "decrypt-fail": "hide" }, attrs }
  const kind = kindOf(message)
  if (kind === "poll" || kind === "poll-vote") return { type: "poll", enc: {}, attrs }
  if (kind === "contact" || kind === "contacts") return { type: "media", enc: { mediatype: kind === "contact" ? "vcard" : "contact_array" }, attrs }
  const media = mediaOf(content)
  if (!media) return { type: "text", enc: {}, attrs }
  const mediatype = media.kind === "audio" && media.fields.ptt ? "ptt" : media.kind
  return { type: "media", enc: { mediatype }, attrs }
}

/** Encrypt `message` from `party` to the account's linked device and write the `<message>`. */
export const sendFromParty = async (
  conn: Connection,
  party: SignalParty,
  account: Account,
  message: proto.IMessage,
  attrs: { from: string; id?: string } & Record<string, string>
): Promise<void> => {
  const kind = stanzaKind(message)
  conn.send({
    tag: "message",
    attrs: { type: kind.type, t: now(), ...kind.attrs, ...attrs, id: attrs.id ?? newMessageId() },
    content: [await encryptFor(party, account, message, kind.enc)]
  })
}

/** What the message handler needs from the peer. */
export interface MessageHost {
  readonly received: ReceivedMessage[]
  readonly errors: string[]
  /** how long the contact's phone takes to send the delivery receipt */
  readonly receiptDelayMs: number
  resolve(user: string): Entity | undefined
  emit(event: "received", message: ReceivedMessage): boolean
  /** what a client sent the account's own phone (e.g. an on-demand history request: ./history.ts) */
  fromOwnDevice?(account: Account, message: proto.Message): void
}

/**
 * A `<message>` from a linked client: decrypt each `<to><enc>` meant for a fake contact, record it,
 * then answer like the server (`<ack class=message>`) and the contact's phone (`<receipt>`, i.e.
 * delivered). Copies for the account's own phone are decrypted and dropped; a message to another
 * account of the peer ends at that account's phone (recorded, not forwarded to its linked device).
 */
export const handleClientMessage = async (host: MessageHost, conn: Connection, account: Account, node: BinaryNode): Promise<void> => {
  const id = node.attrs.id ?? ""
  const destination = node.attrs.to ?? ""
  const targets: Array<{ jid: string; enc: BinaryNode }> = []
  for (const to of getBinaryNodeChildren(getBinaryNodeChild(node, "participants"), "to")) {
    const enc = getBinaryNodeChild(to, "enc")
    if (enc && to.attrs.jid) targets.push({ jid: to.attrs.jid, enc })
  }
  for (const enc of getBinaryNodeChildren(node, "enc")) targets.push({ jid: destination, enc })

  let delivered = false
  for (const { jid, enc } of targets) {
    const decoded = jidDecode(jid)
    const entity = decoded ? host.resolve(decoded.user) : undefined
    const party =
      entity?.kind === "contact" ? entity.contact.party : entity?.kind === "account" && !decoded?.device ? entity.account.phoneParty : undefined
    if (!entity || !party) continue
    try {
      const message = await decryptFrom(party, account, enc)
      // copies for the sender's own phone are dropped; another account's phone keeps them
      if (entity.kind === "account" && entity.account === account) {
        host.fromOwnDevice?.(account, message)
        continue
      }
      const to = entity.kind === "contact" ? entity.contact.phone : entity.account.phone
      record(host, entity, { from: account.phone, to, toJid: destination, id, group: undefined, edit: node.attrs.edit, enc: enc.attrs.type ?? "msg" }, message)
      delivered = true
    } catch (error) {
      host.errors.push(`decrypt ${id} for ${jid}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  conn.send({ tag: "ack", attrs: { class: "message", id, from: destination, t: now() } })
  if (!delivered) return
  const receipt = () => conn.send({ tag: "receipt", attrs: { id, from: destination, t: now() } })
  if (host.receiptDelayMs > 0) setTimeout(receipt, host.receiptDelayMs).unref()
  else receipt()
}

/** What a party of the peer (a contact, another account's phone) decrypted: recorded and announced. */
export const record = (
  host: MessageHost,
  recipient: Entity,
  envelope: Pick<ReceivedMessage, "from" | "to" | "toJid" | "id" | "group" | "edit" | "enc">,
  message: proto.Message
): ReceivedMessage => {
  const content = proto.Message.toObject(message) as proto.IMessage
  const received: ReceivedMessage = {
    ...envelope,
    kind: kindOf(content),
    target: targetOf(content),
    editedText: editedTextOf(content),
    text: textOf(message),
    media: mediaOf(content)?.kind,
    reaction: reactionOf(content),
    message: content
  }
  host.received.push(received)
  if (recipient.kind === "contact") recipient.contact.inbox.push(received)
  host.emit("received", received)
  return received
}

/** A receipt from a contact's phone for a message the client sent it (`type` "read", …). */
export const sendContactReceipt = (conn: Connection, message: ReceivedMessage, type?: string): void => {
  conn.send({ tag: "receipt", attrs: { id: message.id, from: message.toJid, t: now(), ...(type ? { type } : {}) } })
}
