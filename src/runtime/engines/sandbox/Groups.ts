import { Clock, Effect, HashMap, Option, Ref } from "effect"
import type { Group, GroupParticipant, ParticipantAction, ParticipantResult } from "../../../domain/Group.js"
import { EngineEvent, type ReactCommand } from "../../Engine.js"
import type { GroupChange, GroupOperations } from "../../EngineDirectory.js"
import { type Directory, type GroupRecord, personIdOf, refuse } from "./Directory.js"
import { newGroupId, newInviteCode } from "./identity.js"
import { contentRecordOf, type Payload, received } from "./Messaging.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Groups on the sandbox network. Participants are `…@c.us` ids of people who exist here (a
 * session's phone, or an echo phone; a session's `…@lid` is taken for its phone). The creator
 * is `superadmin`; admins (and the superadmin) add, remove, promote and demote, edit the subject
 * and description, and see or revoke the invite code; anyone in the group may send to it. A
 * group the session is not in is `GROUP_NOT_FOUND` to it. Every member session hears each change
 * as a `GroupChanged`, held like a message. Runs under the network's lock.
 */

export const groupNotFound = (groupId: string) => refuse("not_found", "GROUP_NOT_FOUND", `no group ${groupId} that this session is in`)
const notAdmin = refuse("forbidden", "NOT_GROUP_ADMIN", "only a group admin may do that")
const notMember = (groupId: string) => refuse("forbidden", "NOT_GROUP_MEMBER", `this session is not in the group ${groupId}`)

/** What the API shows: everything but the invite code, which only admins may ask for. */
const view = (group: GroupRecord): Group => ({
  id: group.id,
  subject: group.subject,
  description: group.description,
  owner: group.owner,
  createdAt: group.createdAt,
  announce: group.announce,
  restrict: group.restrict,
  memberAddMode: group.memberAddMode ?? "admins",
  approval: group.approval ?? false,
  participants: group.participants
})

export const ids = (group: GroupRecord) => group.participants.map((participant) => participant.id)
export const adminsOf = (group: GroupRecord) => group.participants.filter((participant) => participant.role !== "member").map((participant) => participant.id)
const find = (group: GroupRecord, id: string) => group.participants.find((participant) => participant.id === id)
export const withParticipants = (group: GroupRecord, participants: ReadonlyArray<GroupParticipant>): GroupRecord => ({ ...group, participants })
const withRole = (group: GroupRecord, id: string, role: GroupParticipant["role"]) =>
  withParticipants(group, group.participants.map((participant) => participant.id === id ? { id, role } : participant))

/** A change with the group as it is now (a `leave` carries none: the session is no longer in it). */
export const changed = (kind: GroupChange["kind"], group: GroupRecord, fields: Omit<GroupChange, "kind" | "groupId" | "group">) =>
  EngineEvent.GroupChanged({ change: { kind, groupId: group.id, ...(kind === "leave" ? {} : { group: view(group) }), ...fields } })

/**
 * One participant of an update, WhatsApp-style: 200 done (also for promoting an admin or
 * demoting a member, which changes nothing), 404 not on the network / not in the group, 409
 * already in, 403 the creator (only the creator may remove itself; nobody demotes it).
 */
const step = (group: GroupRecord, actor: GroupParticipant, input: string, person: Option.Option<string>, action: ParticipantAction) => {
  const target = Option.getOrUndefined(person)
  const current = target === undefined ? undefined : find(group, target)
  const answer = (status: number, after: GroupRecord = group) => ({
    group: after,
    result: { id: target ?? input, status, ok: status === 200 } satisfies ParticipantResult,
    changed: after !== group
  })
  if (action === "add") {
    if (target === undefined) return answer(404)
    return current !== undefined ? answer(409) : answer(200, withParticipants(group, [...group.participants, { id: target, role: "member" }]))
  }
  if (current === undefined) return answer(404)
  switch (action) {
    case "remove":
      return current.role === "superadmin" && actor.id !== current.id
        ? answer(403)
        : answer(200, withParticipants(group, group.participants.filter((participant) => participant.id !== current.id)))
    case "promote":
      return answer(200, current.role === "member" ? withRole(group, current.id, "admin") : group)
    case "demote":
      if (current.role === "superadmin") return answer(403)
      return answer(200, current.role === "admin" ? withRole(group, current.id, "member") : group)
  }
}

/**
 * A group keeps an admin while it has anyone in it: when the last admin goes (leaves, is removed
 * or demoted), the longest-standing member is promoted, as WhatsApp does.
 */
const settle = (group: GroupRecord): { readonly group: GroupRecord; readonly promoted: string | null } => {
  const oldest = group.participants[0]
  if (oldest === undefined || group.participants.some((participant) => participant.role !== "member")) return { group, promoted: null }
  return { group: withRole(group, oldest.id, "admin"), promoted: oldest.id }
}

export const groupsOf = (switchboard: Switchboard, directory: Directory) => {
  const { handTo, recordNew } = switchboard
  const { groups, lookup, personOf, putGroup, sessionsOf, tell } = directory

  const asMember = (line: Line, groupId: string) =>
    lookup(groups, groupId).pipe(
      Effect.flatMap((group) =>
        Option.isSome(group) && find(group.value, personIdOf(line)) !== undefined ? Effect.succeed(group.value) : Effect.fail(groupNotFound(groupId))
      )
    )

  const asAdmin = (line: Line, groupId: string) =>
    asMember(line, groupId).pipe(Effect.filterOrFail((group) => find(group, personIdOf(line))?.role !== "member", () => notAdmin))

  /** May the session write in the group? Members may (only admins when it is `announce`). */
  const asSender = (line: Line, groupId: string) =>
    Effect.gen(function*() {
      const group = yield* lookup(groups, groupId)
      if (Option.isNone(group)) return yield* groupNotFound(groupId)
      const me = find(group.value, personIdOf(line))
      if (me === undefined) return yield* notMember(groupId)
      if (group.value.announce && me.role === "member") return yield* notAdmin
      return group.value
    })

  /**
   * Writes a change of participants and tells everyone: those who came get `join`, those who went
   * `leave`, everyone in the group `participants`. The last one out takes the group with them.
   */
  const changeParticipants = (after: GroupRecord, action: ParticipantAction, who: ReadonlyArray<string>, by: string) =>
    Effect.gen(function*() {
      const { group, promoted } = settle(after)
      yield* putGroup(group.id, group.participants.length === 0 ? null : group)
      const stayed = ids(group).filter((id) => action !== "add" || !who.includes(id))
      yield* tell(stayed, changed("participants", group, { participants: who, action, by }))
      if (action === "add") yield* tell(who, changed("join", group, { by }))
      if (action === "remove") yield* tell(who, changed("leave", group, { by }))
      if (promoted !== null) yield* tell(ids(group), changed("participants", group, { participants: [promoted], action: "promote", by: null }))
    })

  const create = (line: Line, subject: string, participants: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const me = personIdOf(line)
      const people = (yield* Effect.forEach(participants, personOf)).flatMap(Option.toArray).filter((id) => id !== me)
      const group: GroupRecord = {
        id: yield* newGroupId,
        subject,
        description: null,
        owner: me,
        createdAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
        announce: false,
        restrict: false,
        participants: [{ id: me, role: "superadmin" }, ...[...new Set(people)].map((id) => ({ id, role: "member" as const }))],
        inviteCode: yield* newInviteCode
      }
      yield* putGroup(group.id, group)
      yield* tell(ids(group), changed("join", group, { by: me }))
      return view(group)
    })

  const updateParticipants = (line: Line, groupId: string, people: ReadonlyArray<string>, action: ParticipantAction) =>
    Effect.gen(function*() {
      const member = yield* asMember(line, groupId)
      // With memberAddMode "all", any member may add; everything else is for admins.
      const before = action === "add" && member.memberAddMode === "all" ? member : yield* asAdmin(line, groupId)
      const actor = find(before, personIdOf(line))!
      let group = before
      const results: Array<ParticipantResult> = []
      const who: Array<string> = []
      for (const input of people) {
        const outcome = step(group, actor, input, yield* personOf(input), action)
        results.push(outcome.result)
        if (outcome.changed) who.push(outcome.result.id)
        group = outcome.group
      }
      if (who.length > 0) yield* changeParticipants(group, action, who, actor.id)
      return results
    })

  const edit = (line: Line, groupId: string, update: { readonly subject: string } | { readonly description: string | null }) =>
    Effect.gen(function*() {
      const group: GroupRecord = { ...(yield* asAdmin(line, groupId)), ...update }
      yield* putGroup(groupId, group)
      yield* tell(ids(group), changed("update", group, { update, by: personIdOf(line) }))
    })

  const leave = (line: Line, groupId: string) =>
    asMember(line, groupId).pipe(Effect.flatMap((group) => {
      const me = personIdOf(line)
      return changeParticipants(withParticipants(group, group.participants.filter((participant) => participant.id !== me)), "remove", [me], me)
    }))

  const revokeInvite = (line: Line, groupId: string) =>
    Effect.gen(function*() {
      const group = { ...(yield* asAdmin(line, groupId)), inviteCode: yield* newInviteCode }
      yield* putGroup(groupId, group)
      return group.inviteCode
    })

  /**
   * With approval on, joining by link asks the admins instead (they hear `JoinRequestsChanged`),
   * and the asker learns that its request waits; asking again adds nothing.
   */
  const askToJoin = (group: GroupRecord, me: string) =>
    Effect.gen(function*() {
      const requests = group.requests ?? []
      if (!requests.some((request) => request.id === me)) {
        const requestedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* putGroup(group.id, { ...group, requests: [...requests, { id: me, requestedAt }] })
        yield* tell(adminsOf(group), EngineEvent.JoinRequestsChanged({ request: { groupId: group.id, participants: [me], action: "created", by: me } }))
      }
      return yield* refuse("conflict", "JOIN_REQUEST_PENDING", "the group's admins approve who joins: the request waits for them")
    })

  /** Joining a group one is already in changes nothing. */
  const join = (line: Line, code: string) =>
    Effect.gen(function*() {
      const me = personIdOf(line)
      const group = Array.from(HashMap.values(yield* Ref.get(groups))).find((candidate) => candidate.inviteCode === code)
      if (group === undefined) return yield* refuse("not_found", "INVITE_NOT_FOUND", "no group has that invite code (revoked?)")
      if (find(group, me) === undefined && group.approval === true) return yield* askToJoin(group, me)
      if (find(group, me) === undefined) {
        yield* changeParticipants(withParticipants(group, [...group.participants, { id: me, role: "member" }]), "add", [me], me)
      }
      return group.id
    })

  const list = (line: Line) =>
    Ref.get(groups).pipe(Effect.map((all) =>
      Array.from(HashMap.values(all))
        .filter((group) => find(group, personIdOf(line)) !== undefined)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
        .map(view)
    ))

  /**
   * A message to the group reaches every other member session (echo phones in a group do
   * nothing). The sender hears `delivered` once all of those sessions took it and `read` once
   * all read it; with nobody to reach it stays at `sent`.
   */
  const toGroup = (line: Line, engineMessageId: string, groupId: string, payload: Payload, timestamp: Date) =>
    Effect.gen(function*() {
      const me = personIdOf(line)
      const group = yield* asSender(line, groupId)
      const recipients = yield* sessionsOf(ids(group).filter((id) => id !== me))
      const phones = recipients.map(({ phone }) => phone)
      const event = received({ engineMessageId, chatId: groupId, from: me, fromLid: line.me.lid }, payload, timestamp)
      // Held for the members before it is recorded as sent, as in a person chat (see `Messaging.send`).
      yield* Effect.forEach(recipients, ({ sessionId }) => handTo(sessionId, event), { discard: true })
      yield* recordNew(engineMessageId, {
        senderSessionId: line.sessionId,
        senderPhone: line.me.phone,
        recipientPhone: groupId,
        timestamp,
        status: "pending",
        awaiting: { delivered: phones, read: phones },
        ...contentRecordOf(payload)
      })
    })

  const reactInGroup = (line: Line, { chatId, emoji, target }: ReactCommand, timestamp: Date) =>
    Effect.gen(function*() {
      const me = personIdOf(line)
      const group = yield* asSender(line, chatId)
      yield* tell(ids(group).filter((id) => id !== me), EngineEvent.ReactionReceived({
        reaction: { chatId, from: me, targetEngineMessageId: target.engineMessageId, emoji, timestamp }
      }))
    })

  /** Whom a member's doings to the group's messages (edits, pins, votes…) reach: every other member session. */
  const otherMemberSessions = (line: Line, groupId: string) =>
    asMember(line, groupId).pipe(Effect.flatMap((group) => sessionsOf(ids(group).filter((id) => id !== personIdOf(line)))))

  const operations = (line: Line): GroupOperations => {
    const run = directory.onBehalfOf(line)
    return {
      create: (subject, participants) => run(create(line, subject, participants)),
      get: (groupId) => run(Effect.map(asMember(line, groupId), view)),
      list: run(list(line)),
      updateParticipants: (groupId, participants, action) => run(updateParticipants(line, groupId, participants, action)),
      setSubject: (groupId, subject) => run(edit(line, groupId, { subject })),
      setDescription: (groupId, description) => run(edit(line, groupId, { description: description === "" ? null : description })),
      leave: (groupId) => run(leave(line, groupId)),
      inviteCode: (groupId) => run(Effect.map(asAdmin(line, groupId), (group) => group.inviteCode)),
      revokeInvite: (groupId) => run(revokeInvite(line, groupId)),
      join: (code) => run(join(line, code))
    }
  }

  return { operations, toGroup, reactInGroup, otherMemberSessions, asMember, asAdmin, changeParticipants }
}
