import type { StoreUnavailable } from "../domain/Errors.js"
import { Context, Effect, Layer, Option } from "effect"
import { GroupRepo } from "../runtime/ports/store/GroupRepo.js"
import { bestEffort } from "../runtime/bestEffort.js"
import { engineCall } from "../runtime/EngineCall.js"
import type { EngineCallError, EngineTimeout, PayloadTooLarge, ValidationFailed } from "../domain/Errors.js"
import type { MediaSource } from "../domain/Message.js"
import { MediaIntake } from "./MediaIntake.js"
import { takeInPicture } from "./media/pictures.js"
import { NotFound } from "../domain/Errors.js"
import {
  type Group,
  type GroupSettingsRequest,
  inviteUrl,
  type JoinRequest,
  type ParticipantAction,
  type ParticipantResult
} from "../domain/Group.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { makeSessionCalls } from "./SessionCalls.js"

type Failure = EngineCallError | EngineTimeout

export interface GroupsService {
  readonly create: (sessionId: string, subject: string, participants: ReadonlyArray<string>) => Effect.Effect<Group, Failure | StoreUnavailable>
  /** Fresh from the network when the session is ready, else what the Store last knew. */
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Group>, Failure | StoreUnavailable>
  readonly get: (sessionId: string, groupId: string) => Effect.Effect<Group, Failure | StoreUnavailable>
  readonly changeParticipants: (
    sessionId: string,
    groupId: string,
    action: ParticipantAction,
    participants: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly groupId: string; readonly results: ReadonlyArray<ParticipantResult> }, Failure | StoreUnavailable>
  readonly setSubject: (sessionId: string, groupId: string, subject: string) => Effect.Effect<Group, Failure | StoreUnavailable>
  readonly setDescription: (sessionId: string, groupId: string, description: string) => Effect.Effect<Group, Failure | StoreUnavailable>
  readonly leave: (sessionId: string, groupId: string) => Effect.Effect<void, Failure | StoreUnavailable>
  readonly inviteCode: (sessionId: string, groupId: string) => Effect.Effect<InviteLink, Failure | StoreUnavailable>
  readonly revokeInvite: (sessionId: string, groupId: string) => Effect.Effect<InviteLink, Failure | StoreUnavailable>
  readonly join: (sessionId: string, code: string) => Effect.Effect<Group, Failure | StoreUnavailable>
  readonly setSettings: (sessionId: string, groupId: string, settings: GroupSettingsRequest) => Effect.Effect<Group, Failure | StoreUnavailable>
  /** Any JPEG, PNG or WebP, made WhatsApp's 640×640 JPEG. */
  readonly setPicture: (
    sessionId: string,
    groupId: string,
    source: MediaSource
  ) => Effect.Effect<void, Failure | StoreUnavailable | ValidationFailed | PayloadTooLarge>
  readonly removePicture: (sessionId: string, groupId: string) => Effect.Effect<void, Failure | StoreUnavailable>
  readonly joinRequests: (sessionId: string, groupId: string) => Effect.Effect<ReadonlyArray<JoinRequest>, Failure | StoreUnavailable>
  readonly answerJoinRequests: (
    sessionId: string,
    groupId: string,
    answer: "approve" | "reject",
    participants: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly groupId: string; readonly results: ReadonlyArray<ParticipantResult> }, Failure | StoreUnavailable>
}

export interface InviteLink {
  readonly groupId: string
  readonly code: string
  readonly url: string
}

export class Groups extends Context.Tag("switchboard/Groups")<Groups, GroupsService>() {
  static readonly layer = Layer.effect(Groups, Effect.suspend(() => make))
}

export const groupNotFound = (groupId: string) =>
  new NotFound({ code: "GROUP_NOT_FOUND", message: `Group ${groupId} does not exist or this session is not in it` })

const make = Effect.gen(function*() {
  const repo = yield* GroupRepo
  const { call, exists, isReady } = yield* makeSessionCalls
  const intake = yield* MediaIntake

  /** Asks the network for the group and keeps what it says; a group gone from it goes from the Store. */
  const refresh = (sessionId: string, groupId: string) =>
    call(sessionId, engineCall("GroupsGet", { groupId })).pipe(
      Effect.tap((group) => repo.upsert(sessionId, group)),
      Effect.tapErrorTag("NotFound", () => repo.remove(sessionId, groupId))
    )

  const invite = (groupId: string) => (code: string): InviteLink => ({ groupId, code, url: inviteUrl(code) })

  const service: GroupsService = {
    create: Effect.fn("Groups.create")((sessionId, subject, participants) =>
      call(sessionId, engineCall("GroupsCreate", { subject, participants })).pipe(
        Effect.tap((group) => repo.upsert(sessionId, group))
      )),
    list: Effect.fn("Groups.list")(function*(sessionId, page) {
      if (yield* isReady(sessionId)) {
        const groups = yield* call(sessionId, engineCall("GroupsList", {}))
        const known = yield* repo.list(sessionId, Option.none())
        const current = new Set(groups.map((group) => group.id))
        yield* Effect.forEach(known.items.filter((group) => !current.has(group.id)), (group) => repo.remove(sessionId, group.id), { discard: true })
        yield* Effect.forEach(groups, (group) => repo.upsert(sessionId, group), { discard: true })
      }
      return yield* repo.list(sessionId, page)
    }),
    get: Effect.fn("Groups.get")((sessionId, groupId) =>
      Effect.flatMap(isReady(sessionId), (ready) =>
        ready
          ? refresh(sessionId, groupId)
          : Effect.flatMap(repo.find(sessionId, groupId), Option.match({
            onNone: () => Effect.fail(groupNotFound(groupId)),
            onSome: Effect.succeed
          })))),
    changeParticipants: Effect.fn("Groups.changeParticipants")(function*(sessionId, groupId, action, participants) {
      const results = yield* call(sessionId, engineCall("GroupsUpdateParticipants", { groupId, participants, action }))
      // The change is made on the network: reading the group back is only the Store's copy.
      yield* bestEffort("groups: reading back a group after a participant change")(refresh(sessionId, groupId))
      return { groupId, results }
    }),
    setSubject: Effect.fn("Groups.setSubject")((sessionId, groupId, subject) =>
      Effect.zipRight(call(sessionId, engineCall("GroupsSetSubject", { groupId, subject })), refresh(sessionId, groupId))),
    setDescription: Effect.fn("Groups.setDescription")((sessionId, groupId, description) =>
      Effect.zipRight(call(sessionId, engineCall("GroupsSetDescription", { groupId, description })), refresh(sessionId, groupId))),
    leave: Effect.fn("Groups.leave")((sessionId, groupId) =>
      Effect.zipRight(call(sessionId, engineCall("GroupsLeave", { groupId })), repo.remove(sessionId, groupId))),
    inviteCode: Effect.fn("Groups.inviteCode")((sessionId, groupId) => Effect.map(call(sessionId, engineCall("GroupsInviteCode", { groupId })), invite(groupId))),
    revokeInvite: Effect.fn("Groups.revokeInvite")((sessionId, groupId) => Effect.map(call(sessionId, engineCall("GroupsRevokeInvite", { groupId })), invite(groupId))),
    join: Effect.fn("Groups.join")((sessionId, code) =>
      Effect.flatMap(call(sessionId, engineCall("GroupsJoin", { code })), (groupId) => refresh(sessionId, groupId))),
    setSettings: Effect.fn("Groups.setSettings")((sessionId, groupId, change) =>
      Effect.zipRight(call(sessionId, engineCall("GroupsSetSettings", { groupId, change })), refresh(sessionId, groupId))),
    setPicture: Effect.fn("Groups.setPicture")(function*(sessionId, groupId, source) {
      yield* exists(sessionId)
      const jpeg = yield* takeInPicture(intake, source)
      yield* call(sessionId, engineCall("GroupsSetPicture", { groupId, jpeg }))
    }),
    removePicture: Effect.fn("Groups.removePicture")((sessionId, groupId) => call(sessionId, engineCall("GroupsSetPicture", { groupId, jpeg: null }))),
    joinRequests: Effect.fn("Groups.joinRequests")((sessionId, groupId) => call(sessionId, engineCall("GroupsJoinRequests", { groupId }))),
    answerJoinRequests: Effect.fn("Groups.answerJoinRequests")(function*(sessionId, groupId, answer, participants) {
      const results = yield* call(sessionId, engineCall("GroupsAnswerJoinRequests", { groupId, participants, answer }))
      // Approved people are members now: the Store's copy follows (the network is the authority).
      yield* bestEffort("groups: reading back a group after answering join requests")(refresh(sessionId, groupId))
      return { groupId, results }
    })
  }
  return service
})
