import { Effect, Option } from "effect"
import type { JoinRequest, MemberAddMode, ParticipantResult } from "../../../domain/Group.js"
import { EngineEvent } from "../../Engine.js"
import type { GroupAdminOperations, GroupSettingsChange } from "../../EngineAccount.js"
import { type Directory, type GroupRecord, personIdOf } from "./Directory.js"
import { adminsOf, changed, type groupsOf, ids, withParticipants } from "./Groups.js"
import type { Pictures } from "./Pictures.js"
import type { Line } from "./Switchboard.js"

/**
 * What a group's admins do beyond its members (see `Groups.ts`): its settings (announce,
 * restrict, who may add members, approval of who joins by link), its picture, and the requests
 * to join while approval is on. Members hear settings as a `GroupChanged` update and a new
 * picture as `ContactsChanged` (as WhatsApp tells of a group's picture); admins hear requests
 * and their answers as `JoinRequestsChanged`. Runs under the network's lock.
 */

type Groups = ReturnType<typeof groupsOf>

/** Only the settings the change names. */
const namedSettings = (change: GroupSettingsChange) =>
  Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)) as {
    readonly announce?: boolean
    readonly restrict?: boolean
    readonly memberAddMode?: MemberAddMode
    readonly approval?: boolean
  }

export const groupAdminOf = (groups: Groups, directory: Directory, pictures: Pictures) => {
  const { putGroup, tell } = directory

  const setSettings = (line: Line, groupId: string, change: GroupSettingsChange) =>
    Effect.gen(function*() {
      const update = namedSettings(change)
      const group: GroupRecord = { ...(yield* groups.asAdmin(line, groupId)), ...update }
      yield* putGroup(groupId, group)
      yield* tell(ids(group), changed("update", group, { update, by: personIdOf(line) }))
    })

  const setPicture = (line: Line, groupId: string, jpeg: Uint8Array | null) =>
    Effect.gen(function*() {
      const before = yield* groups.asAdmin(line, groupId)
      const url = jpeg === null ? null : yield* pictures.upload(groupId, jpeg)
      yield* putGroup(groupId, { ...before, pictureUrl: url })
      yield* pictures.remove(before.pictureUrl ?? null)
      yield* tell(ids(before), EngineEvent.ContactsChanged({ changes: [{ chatId: groupId, picture: jpeg === null ? "removed" : "changed" }] }))
    })

  const joinRequests = (line: Line, groupId: string) =>
    Effect.map(groups.asAdmin(line, groupId), (group) =>
      (group.requests ?? []).map((request): JoinRequest => ({ id: request.id, requestedAt: request.requestedAt, method: "invite_link" })))

  /** Each one asked is 200 (approved: now a member; rejected: the request is gone); anyone else 404. */
  const answerJoinRequests = (line: Line, groupId: string, people: ReadonlyArray<string>, answer: "approve" | "reject") =>
    Effect.gen(function*() {
      const before = yield* groups.asAdmin(line, groupId)
      const pending = before.requests ?? []
      const results: Array<ParticipantResult> = []
      const answered: Array<string> = []
      for (const input of people) {
        const person = Option.getOrUndefined(yield* directory.personOf(input))
        const asked = person !== undefined && pending.some((request) => request.id === person)
        results.push({ id: person ?? input, status: asked ? 200 : 404, ok: asked })
        if (asked && !answered.includes(person)) answered.push(person)
      }
      if (answered.length === 0) return results
      const by = personIdOf(line)
      const rest: GroupRecord = { ...before, requests: pending.filter((request) => !answered.includes(request.id)) }
      if (answer === "approve") {
        const joined = withParticipants(rest, [...rest.participants, ...answered.map((id) => ({ id, role: "member" as const }))])
        yield* groups.changeParticipants(joined, "add", answered, by)
      } else {
        yield* putGroup(groupId, rest)
      }
      const action = answer === "approve" ? "approved" : "rejected"
      yield* tell(adminsOf(before), EngineEvent.JoinRequestsChanged({ request: { groupId, participants: answered, action, by } }))
      return results
    })

  return (line: Line): GroupAdminOperations => {
    const run = directory.onBehalfOf(line)
    return {
      setSettings: (groupId, change) => run(setSettings(line, groupId, change)),
      setPicture: (groupId, jpeg) => run(setPicture(line, groupId, jpeg)),
      joinRequests: (groupId) => run(joinRequests(line, groupId)),
      answerJoinRequests: (groupId, participants, answer) => run(answerJoinRequests(line, groupId, participants, answer))
    }
  }
}
