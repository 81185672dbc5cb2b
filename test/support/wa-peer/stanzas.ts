/**
 * Answers to the client's `<iq>` queries that need content (usync, prekey bundles, privacy, …).
 * Anything not listed gets an empty `type=result`, so Baileys never waits for a timeout.
 */
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, type BinaryNode } from "@whiskeysockets/baileys"
import type { Account } from "./pairing.js"
import { lidJid, pnJid } from "./pairing.js"
import type { FakeContact } from "./contacts.js"

/** Who a JID names, as far as the peer knows. */
export type Entity =
  | { readonly kind: "contact"; readonly contact: FakeContact }
  | { readonly kind: "account"; readonly account: Account }

export type Resolve = (user: string) => Entity | undefined

export const result = (iq: BinaryNode, content?: BinaryNode[]): BinaryNode => ({
  tag: "iq",
  attrs: { from: "s.whatsapp.net", type: "result", id: iq.attrs.id ?? "" },
  ...(content ? { content } : {})
})

const children = (node: BinaryNode | undefined): BinaryNode[] => (Array.isArray(node?.content) ? node.content : [])

const text = (node: BinaryNode | undefined): string | undefined =>
  node?.content instanceof Uint8Array ? Buffer.from(node.content).toString() : typeof node?.content === "string" ? node.content : undefined

/** `<iq xmlns=usync>`: devices, lid, contact (onWhatsApp) and status (about) protocols. The asking account sees
 *  its phone and its own linked device (which Baileys skips); other accounts are reached at their phone only. */
export const usyncResult = (iq: BinaryNode, me: Account, resolve: Resolve, statusOf?: (entity: Entity) => BinaryNode): BinaryNode => {
  const usync = getBinaryNodeChild(iq, "usync")
  const protocols = new Set(children(getBinaryNodeChild(usync, "query")).map(p => p.tag))
  const users = getBinaryNodeChildren(getBinaryNodeChild(usync, "list"), "user").map(user => {
    const phone = text(getBinaryNodeChild(user, "contact"))
    const jid = user.attrs.jid ?? pnJid((phone ?? "").replace(/^\+/, ""))
    const decoded = jidDecode(jid)
    const entity = decoded ? resolve(decoded.user) : undefined
    const content: BinaryNode[] = []
    if (protocols.has("contact")) content.push({ tag: "contact", attrs: { type: entity ? "in" : "out" } })
    if (protocols.has("devices")) {
      const devices: BinaryNode[] =
        entity?.kind === "contact"
          ? [{ tag: "device", attrs: { id: "0" } }]
          : entity?.kind === "account" && entity.account === me
            ? [{ tag: "device", attrs: { id: "0" } }, { tag: "device", attrs: { id: `${me.device}`, "key-index": "1" } }]
            : entity?.kind === "account"
              ? [{ tag: "device", attrs: { id: "0" } }]
              : []
      content.push({
        tag: "devices",
        attrs: {},
        content: [
          { tag: "device-list", attrs: {}, content: devices },
          ...(entity ? [{ tag: "key-index-list", attrs: { ts: `${Math.floor(Date.now() / 1000)}` } }] : [])
        ]
      })
    }
    // the about text (`fetchStatus`); someone WhatsApp does not know gets no answer
    if (protocols.has("status") && entity && statusOf) content.push(statusOf(entity))
    if (protocols.has("lid") && entity && decoded?.server !== "lid") {
      const lidUser = entity.kind === "contact" ? entity.contact.lidUser : entity.account.lidUser
      content.push({ tag: "lid", attrs: { val: lidJid(lidUser) } })
    }
    return { tag: "user", attrs: { jid }, content }
  })
  return result(iq, [
    { tag: "usync", attrs: { ...usync?.attrs }, content: [{ tag: "result", attrs: {} }, { tag: "list", attrs: {}, content: users }] }
  ])
}

/** `<iq xmlns=encrypt type=get><key><user jid=…/>…`: one key bundle per known device-0 user. */
export const keysResult = (iq: BinaryNode, resolve: Resolve): BinaryNode => {
  const users = getBinaryNodeChildren(getBinaryNodeChild(iq, "key"), "user").flatMap(user => {
    const jid = user.attrs.jid ?? ""
    const decoded = jidDecode(jid)
    if (!decoded || decoded.device) return [] // companions of other accounts: not modelled
    const entity = resolve(decoded.user)
    const party = entity?.kind === "contact" ? entity.contact.party : entity?.kind === "account" ? entity.account.phoneParty : undefined
    return party ? [party.bundleNode(jid)] : []
  })
  return result(iq, [{ tag: "list", attrs: {}, content: users }])
}

export const privacyResult = (iq: BinaryNode): BinaryNode =>
  result(iq, [
    {
      tag: "privacy",
      attrs: {},
      content: ["last", "online", "profile", "status", "groupadd", "calladd", "readreceipts"].map(name => ({
        tag: "category",
        attrs: { name, value: name === "readreceipts" ? "all" : name === "groupadd" || name === "calladd" ? "all" : "contacts" }
      }))
    }
  ])

/** The plain-text body of a decrypted `proto.Message`, if it has one. */
export interface TextLike {
  conversation?: string | null
  extendedTextMessage?: { text?: string | null } | null
}
export const textOf = (message: TextLike): string | undefined =>
  message.conversation ?? message.extendedTextMessage?.text ?? undefined
