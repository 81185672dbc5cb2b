/**
 * Calls: a fake contact rings an account, WhatsApp's way, and the client may reject it.
 * - offer: `<call from=<lid> id t><offer call-id call-creator=<lid> caller_pn=<phone>><audio/>[<video/>]</offer></call>`
 * - end: `<call from><terminate call-id call-creator [reason=timeout]/></call>` (no reason: the caller hung up)
 * - the account's phone answered or declined: `<call from><accept|reject call-id call-creator/></call>`
 * - the client's reject (Baileys' `rejectCall`, an iq-like query): `<call from to><reject call-id
 *   call-creator count=0/></call>`, recorded and answered with `<ack class=call type=reject>`.
 */
import { randomBytes } from "node:crypto"
import type { BinaryNode } from "@whiskeysockets/baileys"
import type { Connection } from "./connection.js"
import type { FakeContact } from "./contacts.js"
import type { Account } from "./pairing.js"

/** A reject a linked client sent. */
export interface CallReject {
  /** the rejecting account's phone */
  readonly phone: string
  readonly callId: string
  /** the caller as the client named them (`call-creator`) */
  readonly creator: string
  /** the stanza's `to` */
  readonly to: string
}

export type CallEnd = "hangup" | "timeout" | "accept" | "reject"

export const newCallId = (): string => randomBytes(16).toString("hex").toUpperCase()

const callNode = (contact: FakeContact, child: BinaryNode): BinaryNode => ({
  tag: "call",
  attrs: { from: contact.lid, id: randomBytes(8).toString("hex").toUpperCase(), t: `${Math.floor(Date.now() / 1000)}` },
  content: [child]
})

export const offerNode = (contact: FakeContact, callId: string, isVideo: boolean): BinaryNode =>
  callNode(contact, {
    tag: "offer",
    attrs: { "call-id": callId, "call-creator": contact.lid, caller_pn: contact.jid },
    content: [
      { tag: "audio", attrs: { enc: "opus", rate: "16000" } },
      ...(isVideo ? [{ tag: "video", attrs: { enc: "vp8", dec: "vp8" } }] : [])
    ]
  })

export const endNode = (contact: FakeContact, callId: string, end: CallEnd): BinaryNode => {
  const attrs = { "call-id": callId, "call-creator": contact.lid }
  switch (end) {
    case "hangup":
      return callNode(contact, { tag: "terminate", attrs })
    case "timeout":
      return callNode(contact, { tag: "terminate", attrs: { ...attrs, reason: "timeout" } })
    default:
      return callNode(contact, { tag: end, attrs })
  }
}

export interface CallHost {
  readonly callRejects: CallReject[]
  emit(event: "call-reject", reject: CallReject): boolean
}

/** A `<call>` from a linked client: a reject is recorded and acknowledged (the client waits for it). */
export const handleClientCall = (host: CallHost, conn: Connection, account: Account, node: BinaryNode): void => {
  const child = Array.isArray(node.content) ? node.content[0] : undefined
  const to = node.attrs.to ?? ""
  if (child?.tag === "reject") {
    const reject: CallReject = { phone: account.phone, callId: child.attrs["call-id"] ?? "", creator: child.attrs["call-creator"] ?? "", to }
    host.callRejects.push(reject)
    host.emit("call-reject", reject)
  }
  conn.send({ tag: "ack", attrs: { class: "call", id: node.attrs.id ?? "", from: to, ...(child ? { type: child.tag } : {}) } })
}
