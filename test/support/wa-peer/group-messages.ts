/**
 * Group messages both ways, with sender keys (./sender-keys.ts).
 *
 * Client → group: `<message to=<group>@g.us addressing_mode=lid>` carrying
 * `<participants><to jid=<member device>><enc type=pkmsg|msg>` (the sender key distribution, to
 * each member device that lacks it) and one `<enc type=skmsg>` (the message). The members' parties
 * take in the distribution, then decrypt the skmsg; the server acks, each member's phone receipts
 * (`<receipt from=<group> participant=<member lid>>`).
 *
 * Contact → group: `<message from=<group>@g.us participant=<lid>@lid participant_pn=<phone>
 * addressing_mode=lid>` to each member account's linked device, with an `<enc type=pkmsg|msg>`
 * holding the distribution the first time that device hears from the contact in the group, then
 * the `<enc type=skmsg>`.
 */
import { encodeWAMessage, getBinaryNodeChild, getBinaryNodeChildren, jidDecode, proto, unpadRandomMax16, type BinaryNode } from "@whiskeysockets/baileys"
import type { Connection } from "./connection.js"
import { decryptFrom, encryptFor, type FakeContact } from "./contacts.js"
import { lidUserOf, phoneOf, type PeerGroup } from "./groups.js"
import { record, stanzaKind, type MessageHost } from "./messaging.js"
import type { Account } from "./pairing.js"
import { lidSender } from "./sender-keys.js"
import type { SignalParty } from "./signal.js"
import type { Entity } from "./stanzas.js"

const now = (): string => `${Math.floor(Date.now() / 1000)}`

/** The Signal party a device JID names: a contact, or another account's phone (device 0). */
export const partyOf = (entity: Entity | undefined, device: number | undefined, sender: Account): SignalParty | undefined => {
  if (entity?.kind === "contact") return entity.contact.party
  if (entity?.kind === "account" && entity.account !== sender && !device) return entity.account.phoneParty
  return undefined
}

/** A member device that took in a client's sender key: who it is and the party that now holds the key. */
export interface KeyHolder {
  readonly entity: Entity
  readonly party: SignalParty
}

/**
 * Step one of a client's sender-key stanza (a group message or a status update, under `jid`):
 * each `<participants><to jid><enc>` is a 1:1 message carrying the sender key distribution,
 * which that device's party takes in. Returns the devices that took it.
 */
export const takeInSenderKeys = async (
  host: Pick<MessageHost, "resolve" | "errors">,
  account: Account,
  node: BinaryNode,
  jid: string
): Promise<KeyHolder[]> => {
  const id = node.attrs.id ?? ""
  const sender = lidSender(account.lidUser, account.device)
  const holders: KeyHolder[] = []
  for (const to of getBinaryNodeChildren(getBinaryNodeChild(node, "participants"), "to")) {
    const decoded = jidDecode(to.attrs.jid ?? "")
    const entity = decoded ? host.resolve(decoded.user) : undefined
    const party = partyOf(entity, decoded?.device, account)
    const enc = getBinaryNodeChild(to, "enc")
    if (!entity || !party || !enc) continue
    try {
      const distribution = (await decryptFrom(party, account, enc)).senderKeyDistributionMessage
      if (distribution?.axolotlSenderKeyDistributionMessage && distribution.groupId === jid) {
        await party.senderKeys.process(jid, sender, distribution.axolotlSenderKeyDistributionMessage)
        holders.push({ entity, party })
      }
    } catch (error) {
      host.errors.push(`sender key ${id} under ${jid} for ${to.attrs.jid}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return holders
}

/**
 * Step two: the `<enc type=skmsg>` body, the same ciphertext for every holder; `read(party)`
 * decrypts it with that party's copy of the client's key (throwing if it has none).
 */
export const senderKeyMessageOf = (node: BinaryNode, account: Account, jid: string) => {
  const skmsg = getBinaryNodeChildren(node, "enc").find(enc => enc.attrs.type === "skmsg")?.content
  if (!(skmsg instanceof Uint8Array)) return undefined
  const sender = lidSender(account.lidUser, account.device)
  return {
    read: async (party: SignalParty): Promise<proto.Message> =>
      proto.Message.decode(unpadRandomMax16(await party.senderKeys.decrypt(jid, sender, skmsg)))
  }
}

export interface GroupMessageHost extends MessageHost {
  group(jid: string): PeerGroup | undefined
  /** every sender key distribution a client sent a member, in order */
  readonly distributions: Array<{ readonly group: string; readonly from: string; readonly to: string }>
}

export const handleClientGroupMessage = async (host: GroupMessageHost, conn: Connection, account: Account, node: BinaryNode): Promise<void> => {
  const id = node.attrs.id ?? ""
  const groupJid = node.attrs.to ?? ""
  const group = host.group(groupJid)
  if (!group?.roleOf({ kind: "account", account })) {
    conn.send({ tag: "ack", attrs: { class: "message", id, from: groupJid, t: now(), error: "403" } })
    return
  }
  // 1. the sender key distributions, one 1:1 message per member device
  for (const { entity } of await takeInSenderKeys(host, account, node, groupJid)) {
    host.distributions.push({ group: groupJid, from: account.phone, to: phoneOf(entity) })
  }
  // 2. the message itself, once for all: every member holding the sender's key reads it
  const skmsg = senderKeyMessageOf(node, account, groupJid)
  const readers: Entity[] = []
  for (const { entity } of group.members.values()) {
    const party = partyOf(entity, 0, account)
    if (!party || !skmsg) continue
    try {
      const message = await skmsg.read(party)
      record(host, entity, { from: account.phone, to: phoneOf(entity), toJid: groupJid, id, group: groupJid, edit: node.attrs.edit, enc: "skmsg" }, message)
      readers.push(entity)
    } catch (error) {
      host.errors.push(`skmsg ${id} for ${phoneOf(entity)}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  conn.send({ tag: "ack", attrs: { class: "message", id, from: groupJid, t: now() } })
  const receipts = () => {
    for (const reader of readers) {
      conn.send({ tag: "receipt", attrs: { id, from: groupJid, participant: `${lidUserOf(reader)}@lid`, t: now() } })
    }
  }
  if (host.receiptDelayMs > 0) setTimeout(receipts, host.receiptDelayMs).unref()
  else receipts()
}

/** Writes a stanza to an account's linked device, now or after its next login. */
export type Deliver = (account: Account, id: string, write: (conn: Connection) => Promise<void>) => Promise<void>

/**
 * A contact's message to a group: encrypted once with its sender key, written to each member
 * account's linked device (with the distribution the first time that device hears from it here).
 */
export const sendFromContactToGroup = async (
  deliver: Deliver,
  contact: FakeContact,
  group: PeerGroup,
  message: proto.IMessage,
  id: string
): Promise<void> => {
  if (!group.roleOf({ kind: "contact", contact })) throw new Error(`${contact.phone} is not a member of ${group.jid}`)
  await sendWithSenderKey(deliver, contact, group.jid, group.accounts(), message, id)
}

/**
 * A contact's message under `jid` (a group, or `status@broadcast`) to `accounts`: encrypted once
 * with its sender key for `jid`, with the distribution the first time a device hears from it there.
 */
export const sendWithSenderKey = async (
  deliver: Deliver,
  contact: FakeContact,
  jid: string,
  accounts: ReadonlyArray<Account>,
  message: proto.IMessage,
  id: string
): Promise<void> => {
  const self = lidSender(contact.lidUser)
  const keys = contact.party.senderKeys
  const { type, enc, attrs } = stanzaKind(message)
  // the chain as it stands before this message: a member taking it in can then read the message
  const distribution: proto.IMessage = {
    senderKeyDistributionMessage: { groupId: jid, axolotlSenderKeyDistributionMessage: await keys.distribution(jid, self) }
  }
  const skmsg = await keys.encrypt(jid, self, encodeWAMessage(message))
  for (const account of accounts.filter(a => a.linked)) {
    // decided now, so a redelivery after a reconnect carries the same parts
    const first = keys.firstTo(jid, `${account.lidUser}:${account.device}`)
    await deliver(account, id, async conn => {
      const content: BinaryNode[] = first ? [await encryptFor(contact.party, account, distribution, enc)] : []
      content.push({ tag: "enc", attrs: { v: "2", type: "skmsg", ...enc }, content: skmsg })
      conn.send({
        tag: "message",
        attrs: {
          from: jid,
          participant: contact.lid,
          participant_pn: contact.jid,
          addressing_mode: "lid",
          type,
          ...attrs,
          id,
          t: now(),
          notify: contact.name
        },
        content
      })
    })
  }
}
