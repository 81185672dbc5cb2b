import type { BaileysEventMap, GroupMetadata, GroupParticipant } from "@whiskeysockets/baileys"
import { Effect, Option } from "effect"
import { EngineEvent } from "../../Engine.js"
import type { GroupChange } from "../../EngineDirectory.js"
import { groupOf, participantIdOf } from "./groups.js"
import { isLidJid, isPhoneJid, noPhoneLookup, type PhoneOfLid, personIdOf, sameUser, toApiId } from "./jids.js"
import type { SharedGroups } from "./sharedCache.js"

/**
 * The groups a connection knows, and Baileys' group events as the engine's `GroupChanged`.
 *
 * Baileys asks `cachedGroupMetadata(jid)` before every group send; without an answer it fetches
 * the metadata each time. The cache is filled by every read (`get`, `list`, `create`) and by the
 * events, and kept current by them: a send must reach members added since.
 *
 * Events (rc14): `groups.upsert` (a `<create>` notification: the account is in a new group),
 * `groups.update` (partial: subject, desc, announce, restrict, memberAddMode, joinApprovalMode… from notifications; or whole
 * metadata from `groupFetchAllParticipating`, also run on a `dirty` groups push),
 * `group-participants.update` (add/remove/promote/demote with `GroupParticipant`s, `author` the
 * actor's LID; rc14 loses the notification's `participant_pn`, so the actor's phone comes from the
 * cached members or the LID mapping).
 *
 * With a `shared` copy (the gateway's Cache) every change is written there too, and a lookup
 * that misses here asks it before fetching.
 */

export interface LidPn {
  readonly lid: string
  readonly pn: string
}

/** The pairs of ids a group's metadata reveals: LID-addressed members with their `phoneNumber`, and vice versa. */
export const lidPairsOf = (metadata: Pick<GroupMetadata, "participants">): Array<LidPn> =>
  metadata.participants.flatMap((p): Array<LidPn> =>
    isLidJid(p.id) && isPhoneJid(p.phoneNumber)
      ? [{ lid: p.id, pn: p.phoneNumber! }]
      : isPhoneJid(p.id) && isLidJid(p.lid)
      ? [{ lid: p.lid!, pn: p.id }]
      : []
  )

export class GroupCache {
  private readonly groups = new Map<string, GroupMetadata>()
  /** `lid|pn` pairs already told to `learn` */
  private readonly learnt = new Set<string>()
  private fetch: ((jid: string) => Promise<GroupMetadata>) | undefined

  /** `learn` hears each LID ↔ phone pair the members of the groups that come in reveal, once. */
  constructor(
    private readonly learn: (pairs: ReadonlyArray<LidPn>) => void = () => undefined,
    private readonly shared?: SharedGroups
  ) {}

  /** Once the socket exists: what a send that finds nothing cached fetches with. */
  attach(fetch: (jid: string) => Promise<GroupMetadata>): void {
    this.fetch = fetch
  }

  /** For `makeWASocket({ cachedGroupMetadata })`: the cached copy (here, else shared), else fetched once and kept. */
  readonly lookup = async (jid: string): Promise<GroupMetadata | undefined> => {
    const cached = this.groups.get(jid)
    if (cached !== undefined) return cached
    const shared = await this.shared?.get(jid)
    // an event may have brought the group meanwhile; a shared copy is kept here as it is, not
    // written back, so its age stays that of its fetch
    const meanwhile = this.groups.get(jid)
    if (meanwhile !== undefined) return meanwhile
    if (shared !== undefined) return (this.keep(shared), shared)
    if (this.fetch === undefined) return undefined
    // a failure is left to Baileys' own fetch, which reports it to the sender
    return this.fetch(jid).then((metadata) => (this.put(metadata), metadata), () => undefined)
  }

  get(jid: string): GroupMetadata | undefined {
    return this.groups.get(jid)
  }

  put(metadata: GroupMetadata): void {
    this.keep(metadata)
    this.shared?.set(metadata)
  }

  private keep(metadata: GroupMetadata): void {
    this.groups.set(metadata.id, metadata)
    const fresh = lidPairsOf(metadata).filter(({ lid, pn }) => !this.learnt.has(`${lid}|${pn}`))
    for (const { lid, pn } of fresh) this.learnt.add(`${lid}|${pn}`)
    if (fresh.length > 0) this.learn(fresh)
  }

  forget(jid: string): void {
    this.groups.delete(jid)
    this.shared?.forget(jid)
  }

  /** The phone JID the cached members give for `jid` (a LID), if any. */
  phoneOf(groupJid: string, jid: string | undefined): string | undefined {
    const member = this.groups.get(groupJid)?.participants.find((p) => sameUser(p.id, jid) || sameUser(p.lid, jid))
    return isPhoneJid(member?.id) ? member!.id : isPhoneJid(member?.phoneNumber) ? member!.phoneNumber : undefined
  }

  /** Applies a `group-participants.update` to the cached members. */
  applyParticipants({ action, id, participants }: BaileysEventMap["group-participants.update"]): void {
    const group = this.groups.get(id)
    // a shared copy from before would now miss the change
    if (group === undefined) return this.shared?.forget(id)
    const named = (p: GroupParticipant) => (q: GroupParticipant) => sameUser(p.id, q.id) || sameUser(p.phoneNumber, q.phoneNumber)
    let members = group.participants
    for (const participant of participants) {
      const same = named(participant)
      if (action === "add" && !members.some(same)) members = [...members, { ...participant, admin: null }]
      if (action === "remove") members = members.filter((member) => !same(member))
      if (action === "promote" || action === "demote") {
        members = members.map((member) => (same(member) ? { ...member, admin: action === "promote" ? "admin" : null } : member))
      }
    }
    const updated = { ...group, participants: members, size: members.length }
    this.groups.set(id, updated)
    this.shared?.set(updated)
  }
}

export interface Me {
  readonly id?: string | undefined
  readonly lid?: string | undefined
}

export interface GroupEventContext {
  readonly cache: GroupCache
  readonly me: () => Me | undefined
  readonly phoneOfLid?: PhoneOfLid
  /** The group's metadata, when the account joined one it does not know yet (None if it cannot be read). */
  readonly fetch?: (jid: string) => Effect.Effect<Option.Option<GroupMetadata>>
}

const changed = (change: GroupChange) => EngineEvent.GroupChanged({ change })

/** Who did it: the author's phone id when known (given, cached members, mapping), else the LID. */
const byOf = (context: GroupEventContext, groupJid: string, author: string | undefined, authorPn: string | undefined) =>
  personIdOf(author, authorPn ?? context.cache.phoneOf(groupJid, author), context.phoneOfLid ?? noPhoneLookup)

/** The group as the cache has it now, in API form. */
const cachedGroup = (context: GroupEventContext, jid: string) => {
  const metadata = context.cache.get(jid)
  return metadata === undefined ? Effect.succeed(undefined) : groupOf(metadata, context.phoneOfLid)
}

/** `groups.upsert`: the account is in a new group (created by it or by someone else). */
export const fromGroupsUpsert = (groups: BaileysEventMap["groups.upsert"], context: GroupEventContext) =>
  Effect.forEach(groups, (metadata) =>
    Effect.gen(function*() {
      context.cache.put(metadata)
      const group = yield* groupOf(metadata, context.phoneOfLid)
      const by = yield* byOf(context, metadata.id, metadata.author, metadata.authorPn)
      return changed({ kind: "join", groupId: group.id, group, by })
    }))

type Fields = NonNullable<GroupChange["update"]>

/**
 * `groups.update`. A partial update (a notification) reports the fields it carries; whole
 * metadata (a re-fetch) reports what differs from the cached copy, or nothing when there is none.
 */
export const fromGroupsUpdate = (updates: BaileysEventMap["groups.update"], context: GroupEventContext) =>
  Effect.gen(function*() {
    const events: Array<EngineEvent> = []
    for (const update of updates) {
      const jid = update.id
      const groupId = toApiId(jid)
      if (jid === undefined || groupId === null) continue
      const before = context.cache.get(jid)
      const whole = Array.isArray(update.participants)
      if (whole && before === undefined) {
        context.cache.put(update as GroupMetadata)
        continue
      }
      const differs = (key: "subject" | "desc" | "announce" | "restrict" | "memberAddMode" | "joinApprovalMode") =>
        key in update && (!whole || update[key] !== before?.[key])
      const fields: { -readonly [K in keyof Fields]: Fields[K] } = {}
      if (differs("subject") && update.subject !== undefined) fields.subject = update.subject
      if (differs("desc")) fields.description = update.desc ?? null
      if (differs("announce") && update.announce !== undefined) fields.announce = update.announce
      if (differs("restrict") && update.restrict !== undefined) fields.restrict = update.restrict
      // Baileys' booleans: `memberAddMode` true is "all_member_add", `joinApprovalMode` true is "on"
      if (differs("memberAddMode") && update.memberAddMode !== undefined) fields.memberAddMode = update.memberAddMode ? "all" : "admins"
      if (differs("joinApprovalMode") && update.joinApprovalMode !== undefined) fields.approval = update.joinApprovalMode
      if (whole) context.cache.put(update as GroupMetadata)
      else if (before !== undefined) context.cache.put({ ...before, ...update, participants: before.participants })
      if (Object.keys(fields).length === 0) continue
      const by = yield* byOf(context, jid, update.author, update.authorPn)
      const group = yield* cachedGroup(context, jid)
      events.push(changed({ kind: "update", groupId, update: fields, by, ...(group === undefined ? {} : { group }) }))
    }
    return events
  })

const isMe = (me: Me | undefined) => (p: GroupParticipant) =>
  me !== undefined && [p.id, p.phoneNumber, p.lid].some((jid) => sameUser(jid, me.id) || sameUser(jid, me.lid))

/**
 * `group-participants.update`: who was added, removed, promoted or demoted, and by whom. When
 * the account itself is added or removed it joined (with the group, read once) or left.
 */
export const fromParticipantsUpdate = (event: BaileysEventMap["group-participants.update"], context: GroupEventContext) =>
  Effect.gen(function*() {
    const { action, author, authorPn, id: jid, participants } = event
    const groupId = toApiId(jid)
    if (groupId === null || action === "modify") return []
    const by = yield* byOf(context, jid, author, authorPn)
    context.cache.applyParticipants(event)
    const mine = participants.some(isMe(context.me()))
    const membership = mine && (action === "add" || action === "remove")
    const others = membership ? participants.filter((p) => !isMe(context.me())(p)) : participants
    const events: Array<EngineEvent> = []
    if (others.length > 0) {
      const ids = yield* Effect.forEach(others, (p) => participantIdOf(p, context.phoneOfLid))
      const group = yield* cachedGroup(context, jid)
      events.push(changed({ kind: "participants", groupId, participants: ids, action, by, ...(group === undefined ? {} : { group }) }))
    }
    if (membership && action === "remove") {
      context.cache.forget(jid)
      events.push(changed({ kind: "leave", groupId, by }))
    } else if (membership) {
      const fetched = context.fetch === undefined ? Option.none() : yield* context.fetch(jid)
      if (Option.isSome(fetched)) context.cache.put(fetched.value)
      const group = yield* cachedGroup(context, jid)
      events.push(changed({ kind: "join", groupId, by, ...(group === undefined ? {} : { group }) }))
    }
    return events
  })
