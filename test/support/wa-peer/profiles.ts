/**
 * Profiles on the peer: people's about texts, profile pictures (people's and groups'), business
 * accounts, and each account's blocklist, with the `<iq>`s Baileys sends for them
 * (lib/Socket/chats.js) and the notifications it turns into events:
 *
 * - `<iq xmlns=status type=set><status>text` sets the account's about; the usync `status`
 *   protocol reads anyone's (`statusNode`, used by ./stanzas.ts).
 * - `<iq xmlns=w:profile:picture target? type=get|set>`: the picture's URL (404 item-not-found
 *   when there is none), a new one (plain JPEG bytes, served by the media server) or its removal
 *   (no content). A group's picture follows the group's editing rules and its members' devices
 *   hear `<notification type=picture><set|delete>` (Baileys: `contacts.update { imgUrl }`).
 * - `<iq xmlns=blocklist type=get|set>`: the account's list, `<item action=block|unblock jid=<lid>>`.
 * - `<iq xmlns=w:biz><business_profile><profile jid>`: a business profile, or none.
 *
 * What contacts do goes through the test: `peer.profiles.setAbout(peer.member(BOB), "…")`,
 * `setPicture(entity, jpeg | null)` (the accounts' devices hear it), `setBusiness(entity)`,
 * `blockFromPhone(phone, entity, blocked)` (the account's phone blocks someone: its linked
 * device hears `<notification type=account_sync><blocklist>`, Baileys: `blocklist.update`).
 */
import { randomInt } from "node:crypto"
import { getBinaryNodeChild, jidDecode, type BinaryNode } from "@whiskeysockets/baileys"
import { forbidden, GroupError, lidUserOf, type GroupDirectory } from "./groups.js"
import { lidJid, type Account } from "./pairing.js"
import { result, type Entity, type Resolve } from "./stanzas.js"

export interface ProfileHost {
  resolve: Resolve
  readonly groups: GroupDirectory
  readonly accounts: ReadonlyMap<string, Account>
  /** keep a picture where clients can fetch it; its URL */
  storePicture(jpeg: Buffer): string
  /** write a stanza to the account's linked device, now or after its next login */
  notify(account: Account, node: BinaryNode): void
}

export interface PeerPicture {
  readonly id: string
  readonly url: string
  readonly bytes: Buffer
}

const now = (): number => Math.floor(Date.now() / 1000)

const errorIq = (iq: BinaryNode, error: GroupError): BinaryNode => ({
  tag: "iq",
  attrs: { from: "s.whatsapp.net", type: "error", id: iq.attrs.id ?? "" },
  content: [{ tag: "error", attrs: { code: `${error.code}`, text: error.text } }]
})

const bytesOf = (node: BinaryNode | undefined): Buffer | undefined =>
  node?.content instanceof Uint8Array ? Buffer.from(node.content) : undefined

export class ProfileDirectory {
  /** about texts by LID user */
  readonly abouts = new Map<string, { text: string; t: number }>()
  /** pictures by LID user (people) or group JID */
  readonly pictures = new Map<string, PeerPicture>()
  /** LID users of business accounts */
  readonly businesses = new Set<string>()
  /** each account's blocklist (by phone): the LID users it blocked */
  readonly blocklists = new Map<string, Set<string>>()
  /** every profile iq the clients sent: who, what (`status`, `picture get`, `block`…), about whom */
  readonly queries: Array<{ readonly from: string; readonly op: string; readonly target: string }> = []

  constructor(private readonly host: ProfileHost) {}

  setAbout(entity: Entity, text: string): void {
    this.abouts.set(lidUserOf(entity), { text, t: now() })
  }

  setBusiness(entity: Entity): void {
    this.businesses.add(lidUserOf(entity))
  }

  /** A person's new picture (or none): every linked account hears it, as their contacts would. */
  setPicture(entity: Entity, jpeg: Buffer | null): void {
    const from = lidJid(lidUserOf(entity))
    this.keepPicture(lidUserOf(entity), jpeg)
    const others = [...this.host.accounts.values()].filter(account => entity.kind !== "account" || entity.account !== account)
    for (const account of others) this.host.notify(account, this.pictureNotification(from, from, jpeg !== null))
  }

  blocked(phone: string): Set<string> {
    let list = this.blocklists.get(phone)
    if (!list) this.blocklists.set(phone, (list = new Set()))
    return list
  }

  /** The account's phone (un)blocks someone: its linked device is told. */
  blockFromPhone(phone: string, entity: Entity, blocked: boolean): void {
    const account = this.host.accounts.get(phone)
    if (!account) throw new Error(`no account ${phone} on this peer`)
    const list = this.blocked(phone)
    if (blocked) list.add(lidUserOf(entity))
    else list.delete(lidUserOf(entity))
    this.host.notify(account, {
      tag: "notification",
      attrs: { from: "s.whatsapp.net", type: "account_sync", id: `${randomInt(1_000_000_000, 9_999_999_999)}`, t: `${now()}` },
      content: [{
        tag: "blocklist",
        attrs: {},
        content: [{ tag: "item", attrs: { jid: lidJid(lidUserOf(entity)), action: blocked ? "block" : "unblock" } }]
      }]
    })
  }

  /** The usync `status` protocol's answer for one user. */
  statusNode(entity: Entity): BinaryNode {
    const about = this.abouts.get(lidUserOf(entity))
    return { tag: "status", attrs: { t: `${about?.t ?? 0}` }, ...(about ? { content: Buffer.from(about.text) } : {}) }
  }

  /** The answer to a profile iq (`status`, `w:profile:picture`, `blocklist`, `w:biz`), or undefined when it is none. */
  answer(account: Account, iq: BinaryNode): BinaryNode | undefined {
    const { xmlns, type } = iq.attrs
    const me: Entity = { kind: "account", account }
    const log = (op: string, target = "") => this.queries.push({ from: account.phone, op, target })
    try {
      if (xmlns === "status" && type === "set") {
        log("status")
        this.setAbout(me, bytesOf(getBinaryNodeChild(iq, "status"))?.toString() ?? "")
        return result(iq)
      }
      if (xmlns === "w:profile:picture") return this.answerPicture(me, iq, log)
      if (xmlns === "blocklist") return this.answerBlocklist(account, iq, log)
      if (xmlns === "w:biz") {
        const jid = getBinaryNodeChild(getBinaryNodeChild(iq, "business_profile"), "profile")?.attrs.jid ?? ""
        log("business", jid)
        const entity = this.entityOf(jid)
        const profile: BinaryNode[] = entity && this.businesses.has(lidUserOf(entity))
          ? [{ tag: "profile", attrs: { jid }, content: [{ tag: "description", attrs: {}, content: Buffer.from("A business on the peer") }] }]
          : []
        return result(iq, [{ tag: "business_profile", attrs: {}, content: profile }])
      }
      return undefined
    } catch (error) {
      if (error instanceof GroupError) return errorIq(iq, error)
      throw error
    }
  }

  private answerPicture(me: Entity, iq: BinaryNode, log: (op: string, target?: string) => void): BinaryNode {
    const target = iq.attrs.target
    if (iq.attrs.type === "get") {
      log("picture get", target)
      const picture = target === undefined ? undefined : this.pictures.get(this.pictureKey(target))
      if (!picture) throw new GroupError(404, "item-not-found")
      return result(iq, [{ tag: "picture", attrs: { id: picture.id, url: picture.url, type: "image", direct_path: new URL(picture.url).pathname } }])
    }
    const jpeg = bytesOf(getBinaryNodeChild(iq, "picture")) ?? null
    log(jpeg ? "picture set" : "picture remove", target)
    if (target === undefined || !target.endsWith("@g.us")) {
      this.setPicture(me, jpeg)
      return result(iq)
    }
    const group = this.host.groups.get(target)
    if (!group.roleOf(me)) throw forbidden()
    this.host.groups.requireEditor(group, me)
    const picture = this.keepPicture(group.jid, jpeg)
    for (const account of group.accounts()) {
      this.host.notify(account, this.pictureNotification(group.jid, lidJid(lidUserOf(me)), jpeg !== null, picture?.id))
    }
    return result(iq)
  }

  private answerBlocklist(account: Account, iq: BinaryNode, log: (op: string, target?: string) => void): BinaryNode {
    const list = this.blocked(account.phone)
    if (iq.attrs.type === "get") {
      log("blocklist")
      return result(iq, [{ tag: "list", attrs: {}, content: [...list].map(user => ({ tag: "item", attrs: { jid: lidJid(user) } })) }])
    }
    const item = getBinaryNodeChild(iq, "item")
    const entity = this.entityOf(item?.attrs.jid ?? "")
    log(item?.attrs.action ?? "", item?.attrs.jid)
    if (!entity) throw new GroupError(404, "item-not-found")
    if (item?.attrs.action === "block") list.add(lidUserOf(entity))
    else list.delete(lidUserOf(entity))
    return result(iq)
  }

  private entityOf(jid: string): Entity | undefined {
    const user = jidDecode(jid)?.user
    return user ? this.host.resolve(user) : undefined
  }

  /** People's pictures by LID user, whichever id names them; groups' by JID. */
  private pictureKey(jid: string): string {
    if (jid.endsWith("@g.us")) return jid
    const entity = this.entityOf(jid)
    return entity ? lidUserOf(entity) : jid
  }

  private keepPicture(key: string, jpeg: Buffer | null): PeerPicture | undefined {
    if (jpeg === null) {
      this.pictures.delete(key)
      return undefined
    }
    const picture = { id: `${randomInt(1_000_000_000, 9_999_999_999)}`, url: this.host.storePicture(jpeg), bytes: jpeg }
    this.pictures.set(key, picture)
    return picture
  }

  private pictureNotification(from: string, author: string, set: boolean, id?: string): BinaryNode {
    return {
      tag: "notification",
      attrs: { from, type: "picture", id: `${randomInt(1_000_000_000, 9_999_999_999)}`, t: `${now()}` },
      content: [{ tag: set ? "set" : "delete", attrs: { jid: from, author, ...(set && id ? { id } : {}) } }]
    }
  }
}
