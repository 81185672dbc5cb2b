import type { GroupMetadata, GroupParticipant, WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { Group, ParticipantAction, ParticipantResult, ParticipantRole } from "../../../domain/Group.js"
import { EngineError } from "../../Engine.js"
import type { GroupOperations } from "../../EngineDirectory.js"
import { iqErrorOf, iqFailureOf } from "./disconnect.js"
import type { GroupCache } from "./groupEvents.js"
import { noPhoneLookup, type PhoneOfLid, personIdOf, sameUser, toApiId, toWireJid } from "./jids.js"

/**
 * Groups through Baileys (lib/Socket/groups.js: `w:g2` iqs). Metadata becomes the API's `Group`
 * with people in API form; WhatsApp's refusals become engine refusals. Every group read or
 * created lands in the connection's `GroupCache` (what Baileys' group sends use).
 */

/** The slice of a socket the group operations use (tests stub it). */
export type GroupSocket = Pick<
  WASocket,
  | "groupCreate"
  | "groupMetadata"
  | "groupFetchAllParticipating"
  | "groupParticipantsUpdate"
  | "groupUpdateSubject"
  | "groupUpdateDescription"
  | "groupLeave"
  | "groupInviteCode"
  | "groupRevokeInvite"
  | "groupAcceptInvite"
>

const roleOf = (participant: GroupParticipant): ParticipantRole =>
  participant.admin === "superadmin" || participant.isSuperAdmin
    ? "superadmin"
    : participant.admin === "admin" || participant.isAdmin
    ? "admin"
    : "member"

/** A participant's API id: the phone id when known (its `phoneNumber`, its `jid`, the LID mapping), else its LID. */
export const participantIdOf = (participant: GroupParticipant, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.map(
    personIdOf(participant.id, participant.phoneNumber ?? participant.lid, phoneOfLid),
    (id) => id ?? participant.id
  )

const isoOfSeconds = (seconds: number | undefined): string | null =>
  seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : null

/** Baileys' `GroupMetadata` → the API's `Group`. */
export const groupOf = (metadata: GroupMetadata, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const participants = yield* Effect.forEach(metadata.participants, (participant) =>
      Effect.map(participantIdOf(participant, phoneOfLid), (id) => ({ id, role: roleOf(participant) })))
    return {
      id: toApiId(metadata.id) ?? metadata.id,
      subject: metadata.subject ?? "",
      description: metadata.desc ?? null,
      owner: yield* personIdOf(metadata.owner, metadata.ownerPn, phoneOfLid),
      createdAt: isoOfSeconds(metadata.creation),
      announce: metadata.announce === true,
      restrict: metadata.restrict === true,
      memberAddMode: metadata.memberAddMode === true ? "all" : "admins",
      approval: metadata.joinApprovalMode === true,
      participants
    } satisfies Group
  })

/**
 * What an operation asks of the account, which decides how a 401/403 reads: `admin` operations
 * need admin rights, `member` ones only membership, `invite` ones name an invite code.
 */
type Needs = "admin" | "member" | "invite"

const refuse = (refusal: "not_found" | "forbidden" | "conflict" | "invalid", code: string, message: string) =>
  new EngineError({ code, message: `baileys: ${message}`, transient: false, refusal })

/**
 * A Baileys group error as an engine error. WhatsApp answers `<error code text>`: 404
 * item-not-found, 403 forbidden (not a member), 401 not-authorized (not an admin), 406/410 for
 * invites that are invalid or revoked, 409 conflict, 400 bad-request. Anything else keeps its
 * transience (a closed connection or a timeout is worth retrying).
 */
export const groupErrorOf = (operation: string, needs: Needs) => (error: unknown): EngineError => {
  const iq = iqErrorOf(error)
  const code = iq?.code ?? 0
  const text = iq?.text ?? ""
  if (needs === "invite" && (code === 404 || code === 406 || code === 410 || /item-not-found|not-acceptable|gone/.test(text))) {
    return refuse("not_found", "INVITE_NOT_FOUND", `no group has this invite code (WhatsApp: ${code} ${text})`)
  }
  if (code === 404 || text === "item-not-found") return refuse("not_found", "GROUP_NOT_FOUND", `no such group (WhatsApp: ${code} ${text})`)
  if (code === 401 || code === 403 || text === "forbidden" || text === "not-authorized") {
    const [refusal, why] = {
      admin: ["NOT_GROUP_ADMIN", "only group admins may do this"],
      member: ["NOT_GROUP_MEMBER", "the account is not a member of this group"],
      invite: ["GROUP_JOIN_FORBIDDEN", "WhatsApp does not let the account join this group"]
    }[needs]
    return refuse("forbidden", refusal, `${why} (WhatsApp: ${code} ${text})`)
  }
  if (code === 409) return refuse("conflict", "GROUP_CONFLICT", `the group changed meanwhile (WhatsApp: ${code} ${text})`)
  if (code === 400) return refuse("invalid", "INVALID_GROUP_REQUEST", `WhatsApp refused the request (${code} ${text})`)
  return iqFailureOf(operation, error)
}

/** Runs a Baileys group call, its failure as an engine error. */
const call = <A>(operation: string, needs: Needs, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: groupErrorOf(operation, needs) })

const present = <A>(operation: string, value: A | undefined | null): Effect.Effect<A, EngineError> =>
  value == null
    ? Effect.fail(new EngineError({ code: `${operation}_FAILED`, message: `baileys: WhatsApp's answer to ${operation.toLowerCase()} was empty`, transient: false }))
    : Effect.succeed(value)

interface BaileysParticipantResult {
  readonly status: string
  readonly jid: string | undefined
  readonly content?: { readonly attrs?: Record<string, string> } | undefined
}

/**
 * Baileys' per-person answer (`{ status: "200" | "403" | "409" …, jid }`) → the API's, named as
 * the request named the person (WhatsApp may answer a phone JID with the LID and `phone_number`).
 */
export const participantResultsOf = (requested: ReadonlyArray<string>, results: ReadonlyArray<BaileysParticipantResult>): Array<ParticipantResult> =>
  results.map((result) => {
    const status = Number(result.status)
    const named = [result.jid, result.content?.attrs?.["phone_number"], result.content?.attrs?.["lid"]]
    const asked = requested.find((id) => named.some((jid) => sameUser(jid, toWireJid(id))))
    return { id: asked ?? toApiId(result.jid) ?? result.jid ?? "", status: Number.isFinite(status) ? status : 0, ok: status === 200 }
  })

export const makeGroupOperations = (sock: GroupSocket, cache: GroupCache, phoneOfLid: PhoneOfLid): GroupOperations => {
  const kept = (metadata: GroupMetadata) => Effect.zipRight(Effect.sync(() => cache.put(metadata)), groupOf(metadata, phoneOfLid))
  /** A change the server reports back by notification; the cached copy is dropped meanwhile. */
  const change = <A>(groupId: string, operation: string, needs: Needs, run: (jid: string) => Promise<A>) => {
    const jid = toWireJid(groupId)
    return Effect.ensuring(call(operation, needs, () => run(jid)), Effect.sync(() => cache.forget(jid)))
  }
  return {
    create: (subject, participants) =>
      Effect.flatMap(call("GROUP_CREATE", "member", () => sock.groupCreate(subject, participants.map(toWireJid))), kept),
    get: (groupId) => Effect.flatMap(call("GROUP_GET", "member", () => sock.groupMetadata(toWireJid(groupId))), kept),
    list: Effect.flatMap(
      call("GROUP_LIST", "member", () => sock.groupFetchAllParticipating()),
      (all) => Effect.forEach(Object.values(all), kept)
    ),
    updateParticipants: (groupId, participants, action: ParticipantAction) =>
      Effect.map(
        change(groupId, "GROUP_PARTICIPANTS", "admin", (jid) => sock.groupParticipantsUpdate(jid, participants.map(toWireJid), action)),
        (results) => participantResultsOf(participants, results)
      ),
    setSubject: (groupId, subject) => change(groupId, "GROUP_SUBJECT", "admin", (jid) => sock.groupUpdateSubject(jid, subject)),
    // Baileys deletes the description when given none
    setDescription: (groupId, description) =>
      change(groupId, "GROUP_DESCRIPTION", "admin", (jid) => sock.groupUpdateDescription(jid, description === "" ? undefined : description)),
    leave: (groupId) => change(groupId, "GROUP_LEAVE", "member", (jid) => sock.groupLeave(jid)),
    inviteCode: (groupId) =>
      Effect.flatMap(call("GROUP_INVITE_CODE", "admin", () => sock.groupInviteCode(toWireJid(groupId))), (code) => present("GROUP_INVITE_CODE", code)),
    revokeInvite: (groupId) =>
      Effect.flatMap(call("GROUP_REVOKE_INVITE", "admin", () => sock.groupRevokeInvite(toWireJid(groupId))), (code) => present("GROUP_REVOKE_INVITE", code)),
    join: (code) =>
      Effect.flatMap(
        call("GROUP_JOIN", "invite", () => sock.groupAcceptInvite(code)),
        (jid) => Effect.map(present("GROUP_JOIN", jid), (jid) => toApiId(jid) ?? jid)
      )
  }
}
