import type { BaileysEventMap, WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { JoinRequest } from "../../../domain/Group.js"
import { EngineEvent } from "../../Engine.js"
import type { GroupAdminOperations, GroupSettingsChange } from "../../EngineAccount.js"
import type { GroupCache } from "./groupEvents.js"
import { groupErrorOf, participantResultsOf } from "./groups.js"
import { noPhoneLookup, type PhoneOfLid, personIdOf, sameUser, toApiId, toWireJid } from "./jids.js"

/**
 * What a group's admins do besides the directory's operations (lib/Socket/groups.js, `w:g2`):
 * settings (`<announcement>`/`<locked>`, `<member_add_mode>`, `<membership_approval_mode>`), the
 * picture (`w:profile:picture` with the group as target), and join requests
 * (`<membership_approval_requests>`, `<membership_requests_action>`). Refusals read as the
 * directory's do (`groupErrorOf`): not an admin → forbidden, no such group → not found.
 */

export type GroupAdminSocket = Pick<
  WASocket,
  | "groupSettingUpdate"
  | "groupMemberAddMode"
  | "groupJoinApprovalMode"
  | "groupRequestParticipantsList"
  | "groupRequestParticipantsUpdate"
  | "updateProfilePicture"
  | "removeProfilePicture"
>

/** One `<membership_approval_request jid request_method request_time phone_number?>`, as Baileys hands its attributes. */
type RequestAttrs = Record<string, string | undefined>

const isoOfSeconds = (seconds: string | undefined): string | null => {
  const value = Number(seconds)
  return Number.isFinite(value) && value > 0 ? new Date(value * 1000).toISOString() : null
}

/** A pending request → the API's, the person by phone id when WhatsApp (or the mapping) tells it. */
export const joinRequestOf = (attrs: RequestAttrs, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.map(personIdOf(attrs["jid"], attrs["phone_number"], phoneOfLid), (id): JoinRequest => ({
    id: id ?? attrs["jid"] ?? "",
    requestedAt: isoOfSeconds(attrs["request_time"]),
    method: attrs["request_method"] ?? null
  }))

/** The settings in the order WhatsApp is asked; each is one iq. */
const settingCalls = (sock: GroupAdminSocket, jid: string, change: GroupSettingsChange): Array<() => Promise<void>> => [
  ...(change.announce === undefined ? [] : [() => sock.groupSettingUpdate(jid, change.announce ? "announcement" : "not_announcement")]),
  ...(change.restrict === undefined ? [] : [() => sock.groupSettingUpdate(jid, change.restrict ? "locked" : "unlocked")]),
  ...(change.memberAddMode === undefined
    ? []
    : [() => sock.groupMemberAddMode(jid, change.memberAddMode === "all" ? "all_member_add" : "admin_add")]),
  ...(change.approval === undefined ? [] : [() => sock.groupJoinApprovalMode(jid, change.approval ? "on" : "off")])
]

export const makeGroupAdminOperations = (sock: GroupAdminSocket, cache: GroupCache, phoneOfLid: PhoneOfLid): GroupAdminOperations => {
  const call = <A>(operation: string, run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: groupErrorOf(operation, "admin") })
  /** The server reports the change back by notification; the cached copy is dropped meanwhile. */
  const change = <A>(jid: string, operation: string, run: () => Promise<A>) =>
    Effect.ensuring(call(operation, run), Effect.sync(() => cache.forget(jid)))
  return {
    setSettings: (groupId, settings) => {
      const jid = toWireJid(groupId)
      return Effect.forEach(settingCalls(sock, jid, settings), (run) => change(jid, "GROUP_SETTINGS", run), { discard: true })
    },
    setPicture: (groupId, jpeg) => {
      const jid = toWireJid(groupId)
      return change(jid, "GROUP_PICTURE", () => (jpeg === null ? sock.removeProfilePicture(jid) : sock.updateProfilePicture(jid, Buffer.from(jpeg))))
    },
    joinRequests: (groupId) =>
      Effect.flatMap(
        call("GROUP_REQUESTS", () => sock.groupRequestParticipantsList(toWireJid(groupId))),
        (requests) => Effect.forEach(requests as ReadonlyArray<RequestAttrs>, (attrs) => joinRequestOf(attrs, phoneOfLid))
      ),
    answerJoinRequests: (groupId, participants, answer) => {
      const jid = toWireJid(groupId)
      return Effect.map(
        change(jid, "GROUP_REQUESTS", () => sock.groupRequestParticipantsUpdate(jid, participants.map(toWireJid), answer)),
        (results) => participantResultsOf(participants, results)
      )
    }
  }
}

/**
 * `group.join-request`: someone asked to join (`created`), took it back (`revoked`), or an admin
 * turned it down (`rejected`). Approvals come as the participants' `add`.
 */
export const fromJoinRequest = (event: BaileysEventMap["group.join-request"], phoneOfLid: PhoneOfLid) =>
  Effect.gen(function*() {
    const groupId = toApiId(event.id)
    const who = yield* personIdOf(event.participant, event.participantPn, phoneOfLid)
    if (groupId === null || who === null) return []
    // rc14 drops the notification's participant_pn: a requester acting on their own request is
    // named by the request's phone number instead
    const by = sameUser(event.author, event.participant) ? who : yield* personIdOf(event.author, event.authorPn, phoneOfLid)
    return [EngineEvent.JoinRequestsChanged({ request: { groupId, participants: [who], action: event.action, by } })]
  })
