/**
 * Presence both ways. Baileys rc14 (Socket/chats.js) writes:
 * - `<presence name=<push name> type=available|unavailable>` (sendPresenceUpdate; skipped by
 *   Baileys when creds.me has no name: link with `peer.scan(qr, { phone, name })`);
 *   `<presence name=…>` without a type when its push name changes
 * - `<chatstate from=<me> to=<jid>><composing/> | <composing media=audio/> | <paused/></chatstate>`
 *   (typing, recording, paused)
 * - `<presence to=<jid> id=… type=subscribe>[<tctoken>]</presence>` (presenceSubscribe)
 * and reads (`handlePresenceUpdate` → `presence.update { id: from, presences: { [participant ?? from]: … } }`):
 * - `<presence from=<jid> type=unavailable last=<unix s>|deny>` → `{ lastKnownPresence: "unavailable", lastSeen }`,
 *   any other type → "available"
 * - `<chatstate from=<jid>><composing/></chatstate>` → "composing"; `media=audio` → "recording";
 *   `<paused/>` → "available"
 *
 * The server answers a subscription with the contact's current presence and then keeps the
 * subscriber told, for as long as that socket lives (a client subscribes again after a reconnect).
 */
import type { BinaryNode } from "@whiskeysockets/baileys"
import { jidDecode } from "@whiskeysockets/baileys"
import type { Connection } from "./connection.js"
import type { Account } from "./pairing.js"
import type { Entity } from "./stanzas.js"

export type Chatstate = "composing" | "recording" | "paused"

/** What a linked client said about its presence, in order (`peer.presences`). */
export type ClientPresence =
  /** `<presence type>`: online (available) or offline (unavailable); no type = a name update */
  | { readonly kind: "presence"; readonly phone: string; readonly type: string | undefined; readonly name: string | undefined }
  /** `<chatstate to>` for the chat with `to` (a contact's or account's phone; `toJid` as addressed) */
  | { readonly kind: "chatstate"; readonly phone: string; readonly to: string; readonly toJid: string; readonly state: Chatstate }
  /** `<presence type=subscribe to>` */
  | { readonly kind: "subscribe"; readonly phone: string; readonly to: string; readonly toJid: string }

/** A contact's presence as the server tells it: online, or offline with when it was last seen. */
export interface ContactPresence {
  readonly type: "available" | "unavailable"
  /** unix seconds; "deny" when the contact hides it; omitted: not sent */
  readonly lastSeen?: number | "deny"
}

export const presenceNode = (fromJid: string, presence: ContactPresence): BinaryNode => ({
  tag: "presence",
  attrs: {
    from: fromJid,
    type: presence.type,
    ...(presence.lastSeen !== undefined ? { last: `${presence.lastSeen}` } : {})
  }
})

export const chatstateNode = (fromJid: string, state: Chatstate): BinaryNode => ({
  tag: "chatstate",
  attrs: { from: fromJid },
  content: [{ tag: state === "recording" ? "composing" : state, attrs: state === "recording" ? { media: "audio" } : {} }]
})

export interface PresenceHost {
  readonly presences: ClientPresence[]
  resolve(user: string): Entity | undefined
  /** the presence a contact shows now (what a subscription is answered with) */
  presenceOf(entity: Entity): ContactPresence
  emit(event: "presence", presence: ClientPresence): boolean
}

const phoneOf = (entity: Entity | undefined, jid: string): string =>
  entity?.kind === "contact" ? entity.contact.phone : entity?.kind === "account" ? entity.account.phone : (jidDecode(jid)?.user ?? jid)

/** A `<presence>` or `<chatstate>` from a linked client: recorded; a subscription is answered. */
export const handleClientPresence = (host: PresenceHost, conn: Connection, account: Account, node: BinaryNode): void => {
  const record = (presence: ClientPresence) => {
    host.presences.push(presence)
    host.emit("presence", presence)
  }
  const toJid = node.attrs.to ?? ""
  const entity = toJid ? host.resolve(jidDecode(toJid)?.user ?? "") : undefined
  if (node.tag === "chatstate") {
    const child = Array.isArray(node.content) ? node.content[0] : undefined
    if (!child) return
    const state: Chatstate = child.tag === "composing" && child.attrs.media === "audio" ? "recording" : child.tag === "paused" ? "paused" : "composing"
    record({ kind: "chatstate", phone: account.phone, to: phoneOf(entity, toJid), toJid, state })
    return
  }
  if (node.attrs.type === "subscribe") {
    record({ kind: "subscribe", phone: account.phone, to: phoneOf(entity, toJid), toJid })
    if (!entity) return
    conn.presenceSubscriptions.set(phoneOf(entity, toJid), toJid)
    // answered in the JID the client asked about, as the server does
    conn.send(presenceNode(toJid, host.presenceOf(entity)))
    return
  }
  record({ kind: "presence", phone: account.phone, type: node.attrs.type, name: node.attrs.name })
}
