import { GroupRepo } from "../../runtime/ports/store/GroupRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Array as Arr, DateTime, Effect, Layer, Option } from "effect"
import type { Group, GroupParticipant, ParticipantAction, ParticipantRole } from "../../domain/Group.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { fromIntegerBoolean, toIntegerBoolean } from "./columns.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

interface GroupRecord {
  readonly id: string
  readonly subject: string
  readonly description: string | null
  readonly owner: string | null
  readonly created_at: string | null
  readonly announce: unknown
  readonly restricted: unknown
  readonly member_add_mode: string
  readonly approval: unknown
}

type GroupFields = Partial<Pick<Group, "subject" | "description" | "announce" | "restrict" | "memberAddMode" | "approval">>

interface ParticipantRecord {
  readonly group_id: string
  readonly participant_id: string
  readonly role: ParticipantRole
}

/** Roles a participant action leaves behind: promote makes admins, demote members. */
const roleAfter: Partial<Record<ParticipantAction, ParticipantRole>> = { add: "member", promote: "admin", demote: "member" }

/** The groups each session is in, with their participants: the gateway's copy of the network's. */
export const SqlGroupRepo = Layer.effect(
  GroupRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const load = (sessionId: string, ids: ReadonlyArray<string>): Effect.Effect<Array<Group>, SqlError> =>
      Effect.gen(function*() {
        const groups = yield* sql<GroupRecord>`SELECT * FROM chat_groups WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`
        const participants = yield* sql<ParticipantRecord>`SELECT group_id, participant_id, role FROM group_participants
          WHERE session_id = ${sessionId} AND group_id IN ${sql.in(ids)} ORDER BY participant_id`
        const of = Arr.groupBy(participants, (p) => p.group_id)
        return groups.map((record): Group => ({
          id: record.id,
          subject: record.subject,
          description: record.description,
          owner: record.owner,
          createdAt: record.created_at,
          announce: fromIntegerBoolean(record.announce),
          restrict: fromIntegerBoolean(record.restricted),
          memberAddMode: record.member_add_mode === "all" ? "all" : "admins",
          approval: fromIntegerBoolean(record.approval),
          participants: (of[record.id] ?? []).map((p) => ({ id: p.participant_id, role: p.role }))
        }))
      })

    const writeParticipants = (sessionId: string, groupId: string, participants: ReadonlyArray<GroupParticipant>) =>
      participants.length === 0 ? Effect.void : sql`INSERT INTO group_participants ${sql.insert(participants.map((p) => ({
        session_id: sessionId,
        group_id: groupId,
        participant_id: p.id,
        role: p.role
      })))}`

    /** The group as the network described it, replacing what was kept (participants included). */
    const upsert = Effect.fnUntraced(
      function*(sessionId: string, group: Group) {
        yield* removeRows(sessionId, group.id)
        yield* sql`INSERT INTO chat_groups ${sql.insert({
          session_id: sessionId,
          id: group.id,
          subject: group.subject,
          description: group.description,
          owner: group.owner,
          created_at: group.createdAt,
          announce: toIntegerBoolean(group.announce),
          restricted: toIntegerBoolean(group.restrict),
          member_add_mode: group.memberAddMode,
          approval: toIntegerBoolean(group.approval),
          updated_at: DateTime.formatIso(yield* DateTime.now)
        })}`
        yield* writeParticipants(sessionId, group.id, group.participants)
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const removeRows = (sessionId: string, groupId: string) =>
      Effect.zipRight(
        sql`DELETE FROM group_participants WHERE session_id = ${sessionId} AND group_id = ${groupId}`,
        sql`DELETE FROM chat_groups WHERE session_id = ${sessionId} AND id = ${groupId}`
      )

    /** Some fields changed (subject, description, settings); a group not kept is left alone. */
    const update = Effect.fnUntraced(
      function*(sessionId: string, groupId: string, fields: GroupFields) {
        const changes = {
          ...(fields.subject === undefined ? {} : { subject: fields.subject }),
          ...(fields.description === undefined ? {} : { description: fields.description }),
          ...(fields.announce === undefined ? {} : { announce: toIntegerBoolean(fields.announce) }),
          ...(fields.restrict === undefined ? {} : { restricted: toIntegerBoolean(fields.restrict) }),
          ...(fields.memberAddMode === undefined ? {} : { member_add_mode: fields.memberAddMode }),
          ...(fields.approval === undefined ? {} : { approval: toIntegerBoolean(fields.approval) }),
          updated_at: DateTime.formatIso(yield* DateTime.now)
        }
        return yield* sql`UPDATE chat_groups SET ${sql.update(changes)} WHERE session_id = ${sessionId} AND id = ${groupId}`
      },
      Effect.asVoid,
      orStoreUnavailable
    )

    /** Participants were added, removed, promoted or demoted. */
    const changeParticipants = Effect.fnUntraced(
      function*(sessionId: string, groupId: string, participants: ReadonlyArray<string>, action: ParticipantAction) {
        if (participants.length === 0) return
        yield* sql`DELETE FROM group_participants
          WHERE session_id = ${sessionId} AND group_id = ${groupId} AND participant_id IN ${sql.in(participants)}`
        const role = roleAfter[action]
        if (role !== undefined) yield* writeParticipants(sessionId, groupId, participants.map((id) => ({ id, role })))
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const remove = storeOperation(
      (sessionId: string, groupId: string) => removeRows(sessionId, groupId), sql.withTransaction, Effect.asVoid)

    const find = storeOperation(
      (sessionId: string, groupId: string) => Effect.map(load(sessionId, [groupId]), (groups) => Option.fromNullable(groups[0])))

    /** By subject, then id; paged on groups, each with all its participants (rule 11). */
    const list = Effect.fn("GroupRepo.list")(
      (sessionId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<Group>, SqlError> =>
        listByRootIds(sql, {
          table: "chat_groups",
          where: sql`session_id = ${sessionId}`,
          orderBy: sql.literal("subject ASC, id ASC"),
          page,
          loadByIds: (ids) => load(sessionId, ids),
          idOf: (group) => group.id
        }),
      orStoreUnavailable
    )

    return { upsert, update, changeParticipants, remove, find, list } as const
  })
)
