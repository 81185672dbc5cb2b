/**
 * Status updates (stories) a linked client posts: `<message to=status@broadcast>` encrypted like
 * a group message, with a sender key under the group id `status@broadcast`. The audience is the
 * client's `statusJidList`: each of their devices gets the distribution in
 * `<participants><to jid><enc type=pkmsg|msg>`, then one `<enc type=skmsg>` carries the update.
 * Each contact of the audience takes in the distribution and reads the update; the peer records
 * it once, with who was given the key (`participants`) and who read it (`readers`). A revoke
 * (`edit=7`) names no audience: those holding the key from earlier updates read it. Contacts
 * post theirs the same way to the accounts that have them (`postStatusFromContact`).
 */
import { proto, type BinaryNode } from "@whiskeysockets/baileys"
import type { Connection } from "./connection.js"
import type { FakeContact } from "./contacts.js"
import { partyOf, senderKeyMessageOf, sendWithSenderKey, takeInSenderKeys, type Deliver } from "./group-messages.js"
import { phoneOf } from "./groups.js"
import { contentOf } from "./kinds.js"
import type { Account } from "./pairing.js"
import { textOf, type Entity } from "./stanzas.js"

export const STATUS_JID = "status@broadcast"

/** A status update a client posted, as its audience's phones saw it. */
export interface ReceivedStatus {
  /** the posting account's phone */
  readonly from: string
  readonly id: string
  /** phones of the audience the client gave its sender key to (its `statusJidList`) */
  readonly participants: readonly string[]
  /** phones of those who decrypted the update */
  readonly readers: readonly string[]
  /** the stanza's `edit` attribute ("7": the status was revoked) */
  readonly edit: string | undefined
  readonly text: string | undefined
  readonly message: proto.IMessage
}

export interface StatusHost {
  readonly statuses: ReceivedStatus[]
  readonly errors: string[]
  resolve(user: string): Entity | undefined
  emit(event: "status", status: ReceivedStatus): boolean
}

export const handleClientStatus = async (host: StatusHost, conn: Connection, account: Account, node: BinaryNode): Promise<void> => {
  const id = node.attrs.id ?? ""
  const audience = new Map((await takeInSenderKeys(host, account, node, STATUS_JID)).map(holder => [phoneOf(holder.entity), holder]))
  // A revoke names no audience: those who hold the key from earlier updates read it.
  const holders = new Map(audience)
  for (const earlier of host.statuses.filter(s => s.from === account.phone)) {
    for (const phone of earlier.participants) {
      const entity = host.resolve(phone)
      const party = partyOf(entity, 0, account)
      if (entity && party && !holders.has(phone)) holders.set(phone, { entity, party })
    }
  }
  const skmsg = senderKeyMessageOf(node, account, STATUS_JID)
  const readers: string[] = []
  let message: proto.IMessage | undefined
  for (const [phone, { party }] of holders) {
    if (!skmsg) break
    try {
      const decrypted = await skmsg.read(party)
      message ??= proto.Message.toObject(decrypted) as proto.IMessage
      readers.push(phone)
    } catch (error) {
      host.errors.push(`status skmsg ${id} for ${phone}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  conn.send({ tag: "ack", attrs: { class: "message", id, from: STATUS_JID, t: `${Math.floor(Date.now() / 1000)}` } })
  if (message === undefined) return
  const status: ReceivedStatus = {
    from: account.phone,
    id,
    participants: [...audience.keys()],
    readers,
    edit: node.attrs.edit,
    text: textOf(contentOf(message)),
    message
  }
  host.statuses.push(status)
  host.emit("status", status)
}

/**
 * A contact posts a status update to the accounts `audience` (phones): sender-key encrypted under
 * `status@broadcast`, written to each one's linked device as
 * `<message from=status@broadcast participant=<lid> participant_pn=<phone>>`.
 */
export const postStatusFromContact = async (
  deliver: Deliver,
  contact: FakeContact,
  audience: ReadonlyArray<Account>,
  message: proto.IMessage,
  id: string
): Promise<void> => sendWithSenderKey(deliver, contact, STATUS_JID, audience, message, id)
