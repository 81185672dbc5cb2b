import { CallRepo, type CallRecorded } from "../../runtime/ports/store/CallRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, Option } from "effect"
import type { Call, CallStatus } from "../../domain/Call.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { fromIntegerBoolean, toIntegerBoolean } from "./columns.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

interface CallRecord {
  readonly id: string
  readonly call_id: string
  readonly from_id: string
  readonly is_video: unknown
  readonly is_group: unknown
  readonly status: CallStatus
  readonly at: string
}

const toCall = (record: CallRecord): Call => ({
  callId: record.call_id,
  from: record.from_id,
  isVideo: fromIntegerBoolean(record.is_video),
  isGroup: fromIntegerBoolean(record.is_group),
  status: record.status,
  at: record.at
})

/** The root key pagination pages on: unique across sessions, as call ids are only per account. */
const rowId = (sessionId: string, callId: string) => `${sessionId}/${callId}`

/** Each session's call log (table `calls`, migration 0011). */
export const SqlCallRepo = Layer.effect(
  CallRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const load = (ids: ReadonlyArray<string>): Effect.Effect<Array<Call & { readonly id: string }>, SqlError> =>
      Effect.map(sql<CallRecord>`SELECT * FROM calls WHERE id IN ${sql.in(ids)}`, (rows) => rows.map((row) => ({ ...toCall(row), id: row.id })))

    const findRow = (sessionId: string, callId: string) =>
      Effect.map(load([rowId(sessionId, callId)]), (found) => Option.map(Option.fromNullable(found[0]), ({ id: _, ...call }) => call as Call))

    const setStatus = Effect.fnUntraced(
      function*(sessionId: string, callId: string, status: CallStatus, at: string) {
        const known = yield* findRow(sessionId, callId)
        if (Option.isNone(known) || known.value.status === status) return Option.none<Call>()
        yield* sql`UPDATE calls SET status = ${status}, updated_at = ${at} WHERE id = ${rowId(sessionId, callId)}`
        return Option.some<Call>({ ...known.value, status })
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const record = Effect.fnUntraced(
      function*(sessionId: string, call: Call, at: string) {
        const known = yield* findRow(sessionId, call.callId)
        if (Option.isSome(known)) {
          if (known.value.status === call.status) return { _tag: "Unchanged", call: known.value } satisfies CallRecorded
          yield* sql`UPDATE calls SET status = ${call.status}, updated_at = ${at} WHERE id = ${rowId(sessionId, call.callId)}`
          return { _tag: "Changed", call: { ...known.value, status: call.status } } satisfies CallRecorded
        }
        yield* sql`INSERT INTO calls ${sql.insert({
          id: rowId(sessionId, call.callId),
          session_id: sessionId,
          call_id: call.callId,
          from_id: call.from,
          is_video: toIntegerBoolean(call.isVideo),
          is_group: toIntegerBoolean(call.isGroup),
          status: call.status,
          at: call.at,
          updated_at: at
        })}`
        return { _tag: "New", call } satisfies CallRecorded
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const find = storeOperation((sessionId: string, callId: string) => findRow(sessionId, callId))

    const list = Effect.fn("CallRepo.list")(
      (sessionId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<Call>, SqlError> =>
        Effect.map(
          listByRootIds(sql, {
            table: "calls",
            where: sql`session_id = ${sessionId}`,
            orderBy: sql.literal("at DESC, id DESC"),
            page,
            loadByIds: load,
            idOf: (call) => call.id
          }),
          ({ items, total }) => ({ items: items.map(({ id: _, ...call }) => call), total })
        ),
      orStoreUnavailable
    )

    return { record, setStatus, find, list } as const
  })
)
