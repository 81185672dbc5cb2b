/**
 * Groups on the peer: the server's group state and rules, what members do (through the clients'
 * `<iq xmlns=w:g2>`, answered in ./group-iq.ts, or through the test) and the
 * `<notification type=w:gp2>` stanzas the server sends members' devices, which Baileys turns into `groups.upsert` / `groups.update` /
 * `group-participants.update`. Members are accounts of the peer or fake contacts.
 *
 * Groups are LID-addressed, as WhatsApp's new groups are: a participant is
 * `<participant jid=<lid>@lid phone_number=<phone>@s.whatsapp.net type=admin|superadmin>`.
 * Errors are `<iq type=error><error code text>` (Baileys throws `Boom(text, { data: code })`):
 * 404 item-not-found (no such group / invite), 403 forbidden (not a member), 401 not-authorized
 * (not an admin), 409 conflict (stale description id), 410 gone (revoked invite).
 */
import { randomBytes, randomInt } from "node:crypto"
import type { BinaryNode } from "@whiskeysockets/baileys"
import { lidJid, pnJid, type Account } from "./pairing.js"
import type { Entity } from "./stanzas.js"

export type Role = "superadmin" | "admin" | "member"
export type ParticipantAction = "add" | "remove" | "promote" | "demote"

/** A refusal, answered as `<iq type=error><error code text>` (./group-iq.ts). */
export class GroupError extends Error {
  constructor(readonly code: number, readonly text: string) {
    super(`${code} ${text}`)
  }
}
const notFound = () => new GroupError(404, "item-not-found")
export const forbidden = () => new GroupError(403, "forbidden")
const notAuthorized = () => new GroupError(401, "not-authorized")

export const lidUserOf = (entity: Entity): string => (entity.kind === "contact" ? entity.contact.lidUser : entity.account.lidUser)
export const phoneOf = (entity: Entity): string => (entity.kind === "contact" ? entity.contact.phone : entity.account.phone)

const now = (): number => Math.floor(Date.now() / 1000)
const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
/** Invite codes look like WhatsApp's: 22 letters and digits. */
const newInviteCode = (): string => Array.from(randomBytes(22), byte => alphanumeric[byte % alphanumeric.length]).join("")

export class PeerGroup {
  /** members by LID user */
  readonly members = new Map<string, { readonly entity: Entity; role: Role }>()
  subjectTime: number
  subjectOwner: Entity
  description: { id: string; text: string; time: number; by: Entity } | undefined
  announce = false
  restrict = false
  inviteCode = newInviteCode()
  readonly revokedCodes = new Set<string>()
  /** who may add members: admins only, or every member */
  memberAddMode: "admin_add" | "all_member_add" = "admin_add"
  /** admins approve who asks to join (./group-requests.ts) */
  approval = false
  /** pending join requests by LID user */
  readonly requests = new Map<string, { readonly entity: Entity; readonly method: string; readonly time: number }>()

  constructor(
    /** the group's user part, e.g. 120363012345678901 */
    readonly id: string,
    readonly creator: Entity,
    public subject: string,
    readonly creation: number
  ) {
    this.subjectTime = creation
    this.subjectOwner = creator
  }

  get jid(): string {
    return `${this.id}@g.us`
  }

  roleOf(entity: Entity): Role | undefined {
    return this.members.get(lidUserOf(entity))?.role
  }

  /** the member accounts (whose linked devices get notifications and messages) */
  accounts(): Account[] {
    return [...this.members.values()].flatMap(m => (m.entity.kind === "account" ? [m.entity.account] : []))
  }
}

export const participantNode = (entity: Entity, role?: Role): BinaryNode => ({
  tag: "participant",
  attrs: { jid: lidJid(lidUserOf(entity)), phone_number: pnJid(phoneOf(entity)), ...(role && role !== "member" ? { type: role } : {}) }
})

/** The `<group>` metadata node, as a query, a create or the participating list carries it. */
export const groupNode = (group: PeerGroup): BinaryNode => {
  const content: BinaryNode[] = []
  if (group.description) {
    const { id, text, time, by } = group.description
    content.push({
      tag: "description",
      attrs: { id, t: `${time}`, participant: lidJid(lidUserOf(by)), participant_pn: pnJid(phoneOf(by)) },
      content: [{ tag: "body", attrs: {}, content: Buffer.from(text) }]
    })
  }
  if (group.announce) content.push({ tag: "announcement", attrs: {} })
  if (group.restrict) content.push({ tag: "locked", attrs: {} })
  content.push({ tag: "member_add_mode", attrs: {}, content: group.memberAddMode })
  if (group.approval) content.push({ tag: "membership_approval_mode", attrs: {}, content: [{ tag: "group_join", attrs: { state: "on" } }] })
  for (const { entity, role } of group.members.values()) content.push(participantNode(entity, role))
  return {
    tag: "group",
    attrs: {
      id: group.id,
      creator: lidJid(lidUserOf(group.creator)),
      creator_pn: pnJid(phoneOf(group.creator)),
      creation: `${group.creation}`,
      subject: group.subject,
      s_t: `${group.subjectTime}`,
      s_o: lidJid(lidUserOf(group.subjectOwner)),
      s_o_pn: pnJid(phoneOf(group.subjectOwner)),
      addressing_mode: "lid",
      size: `${group.members.size}`
    },
    content
  }
}

export interface GroupHost {
  /** write a stanza to the account's linked device, now or after its next login */
  notify(account: Account, node: BinaryNode): void
}

/** The per-participant result of an add/remove/promote/demote: `error` is WhatsApp's status. */
export interface ParticipantResult {
  readonly jid: string
  readonly error?: string
}

export class GroupDirectory {
  readonly groups = new Map<string, PeerGroup>()
  /** every `w:g2` iq the clients sent: who, what (`query`, `create`, `add`…), to which group (or `@g.us`) */
  readonly queries: Array<{ readonly from: string; readonly op: string; readonly to: string }> = []

  constructor(private readonly host: GroupHost) {}

  get(jid: string): PeerGroup {
    const group = this.groups.get(jid)
    if (!group) throw notFound()
    return group
  }

  /** `creator` makes a group with `members` (unknown ones are left out); every member account hears `<create>`. */
  create(creator: Entity, subject: string, members: ReadonlyArray<Entity>): PeerGroup {
    const group = new PeerGroup(`120363${randomInt(100_000, 999_999)}${randomInt(100_000, 999_999)}`, creator, subject, now())
    group.members.set(lidUserOf(creator), { entity: creator, role: "superadmin" })
    for (const entity of members) if (!group.roleOf(entity)) group.members.set(lidUserOf(entity), { entity, role: "member" })
    this.groups.set(group.jid, group)
    this.notify(group, creator, { tag: "create", attrs: {}, content: [groupNode(group)] })
    return group
  }

  updateParticipants(group: PeerGroup, actor: Entity, action: ParticipantAction, targets: ReadonlyArray<{ jid: string; entity: Entity | undefined }>): ParticipantResult[] {
    this.requireAdmin(group, actor)
    const changed: Entity[] = []
    const results = targets.map(({ jid, entity }): ParticipantResult => {
      const member = entity && group.members.get(lidUserOf(entity))
      if (!entity) return { jid, error: "404" } // not on WhatsApp
      if (action === "add") {
        if (member) return { jid, error: "409" } // already in the group
        group.members.set(lidUserOf(entity), { entity, role: "member" })
      } else if (!member) {
        return { jid, error: "404" }
      } else if (action === "remove") {
        group.members.delete(lidUserOf(entity))
      } else {
        member.role = action === "promote" ? "admin" : "member"
      }
      changed.push(entity)
      return { jid }
    })
    if (changed.length > 0) {
      // the removed still hear that they were removed
      const content = changed.map(entity => participantNode(entity))
      this.notify(group, actor, { tag: action, attrs: {}, content }, action === "remove" ? changed : [])
    }
    return results
  }

  setSubject(group: PeerGroup, actor: Entity, subject: string): void {
    this.requireEditor(group, actor)
    group.subject = subject
    group.subjectTime = now()
    group.subjectOwner = actor
    this.notify(group, actor, {
      tag: "subject",
      attrs: { subject, s_t: `${group.subjectTime}`, s_o: lidJid(lidUserOf(actor)), s_o_pn: pnJid(phoneOf(actor)) }
    })
  }

  /** "" deletes the description. `prev` (the id the client knows) must be the current one. */
  setDescription(group: PeerGroup, actor: Entity, text: string, prev?: string): void {
    this.requireEditor(group, actor)
    if (prev !== undefined && prev !== group.description?.id) throw new GroupError(409, "conflict")
    const id = randomBytes(8).toString("hex").toUpperCase()
    group.description = text === "" ? undefined : { id, text, time: now(), by: actor }
    this.notify(group, actor, {
      tag: "description",
      attrs: text === "" ? { id, delete: "true" } : { id },
      ...(text === "" ? {} : { content: [{ tag: "body", attrs: {}, content: Buffer.from(text) }] })
    })
  }

  /** Only admins may send (`announce`) / edit the group's info (`restrict`). */
  setSettings(group: PeerGroup, actor: Entity, settings: { announce?: boolean; restrict?: boolean }): void {
    this.requireAdmin(group, actor)
    if (settings.announce !== undefined && settings.announce !== group.announce) {
      group.announce = settings.announce
      this.notify(group, actor, { tag: group.announce ? "announcement" : "not_announcement", attrs: {} })
    }
    if (settings.restrict !== undefined && settings.restrict !== group.restrict) {
      group.restrict = settings.restrict
      this.notify(group, actor, { tag: group.restrict ? "locked" : "unlocked", attrs: {} })
    }
  }

  inviteCode(group: PeerGroup, actor: Entity): string {
    this.requireAdmin(group, actor)
    return group.inviteCode
  }

  revokeInvite(group: PeerGroup, actor: Entity): string {
    this.requireAdmin(group, actor)
    group.revokedCodes.add(group.inviteCode)
    group.inviteCode = newInviteCode()
    return group.inviteCode
  }

  /** Join by invite code: the members (and the joiner) hear `<add reason=invite>`. */
  join(code: string, entity: Entity): PeerGroup {
    const all = [...this.groups.values()]
    const group = all.find(g => g.inviteCode === code)
    if (!group) throw all.some(g => g.revokedCodes.has(code)) ? new GroupError(410, "gone") : notFound()
    if (!group.roleOf(entity)) {
      group.members.set(lidUserOf(entity), { entity, role: "member" })
      this.notify(group, entity, { tag: "add", attrs: { reason: "invite" }, content: [participantNode(entity)] })
    }
    return group
  }

  leave(group: PeerGroup, entity: Entity): void {
    if (!group.roleOf(entity)) throw forbidden()
    group.members.delete(lidUserOf(entity))
    this.notify(group, entity, { tag: "remove", attrs: {}, content: [participantNode(entity)] }, [entity])
    if (group.members.size === 0) this.groups.delete(group.jid)
  }

  /** The group an invite code opens (invite info), or 404. */
  byCode(code: string): PeerGroup {
    const group = [...this.groups.values()].find(g => g.inviteCode === code)
    if (!group) throw notFound()
    return group
  }

  requireAdmin(group: PeerGroup, actor: Entity): void {
    const role = group.roleOf(actor)
    if (!role) throw forbidden()
    if (role === "member") throw notAuthorized()
  }

  /** Subject and description: any member, unless the group is `restrict`ed to admins. */
  requireEditor(group: PeerGroup, actor: Entity): void {
    if (group.restrict) return this.requireAdmin(group, actor)
    if (!group.roleOf(actor)) throw forbidden()
  }

  /** `<notification type=w:gp2>` from the group, by `actor`, to every member account (and `also`), or to its admins only. */
  notify(group: PeerGroup, actor: Entity, child: BinaryNode, also: ReadonlyArray<Entity> = [], adminsOnly = false): void {
    const node: BinaryNode = {
      tag: "notification",
      attrs: {
        from: group.jid,
        type: "w:gp2",
        id: `${randomInt(1_000_000_000, 9_999_999_999)}`,
        t: `${now()}`,
        participant: lidJid(lidUserOf(actor)),
        participant_pn: pnJid(phoneOf(actor)),
        addressing_mode: "lid",
        ...(actor.kind === "contact" ? { notify: actor.contact.name } : {})
      },
      content: [child]
    }
    const members = adminsOnly ? group.accounts().filter(account => group.roleOf({ kind: "account", account }) !== "member") : group.accounts()
    const accounts = new Set([...members, ...also.flatMap(e => (e.kind === "account" ? [e.account] : []))])
    for (const account of accounts) this.host.notify(account, node)
  }
}
