import { LabelRepo } from "../../runtime/ports/store/LabelRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Layer, Option } from "effect"
import type { Label } from "../../domain/Label.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

export interface LabelRecord {
  readonly id: string
  readonly name: string
  readonly color: unknown
}

export const toLabel = (record: LabelRecord): Label => ({ id: record.id, name: record.name, color: Number(record.color) })

/** WhatsApp Business labels of each session, and which chats carry them. */
export const SqlLabelRepo = Layer.effect(
  LabelRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const load = (sessionId: string, ids: ReadonlyArray<string>): Effect.Effect<Array<Label>, SqlError> =>
      Effect.map(sql<LabelRecord>`SELECT id, name, color FROM labels WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`, (rows) => rows.map(toLabel))

    const upsert = Effect.fnUntraced(
      function*(sessionId: string, label: Label) {
        yield* sql`DELETE FROM labels WHERE session_id = ${sessionId} AND id = ${label.id}`
        yield* sql`INSERT INTO labels ${sql.insert({ session_id: sessionId, id: label.id, name: label.name, color: label.color, updated_at: DateTime.formatIso(yield* DateTime.now) })}`
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    /** A deleted label leaves every chat too. */
    const remove = Effect.fnUntraced(
      function*(sessionId: string, labelId: string) {
        yield* sql`DELETE FROM chat_labels WHERE session_id = ${sessionId} AND label_id = ${labelId}`
        yield* sql`DELETE FROM labels WHERE session_id = ${sessionId} AND id = ${labelId}`
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const find = storeOperation(
      (sessionId: string, labelId: string) => Effect.map(load(sessionId, [labelId]), (found) => Option.fromNullable(found[0])))

    const list = Effect.fn("LabelRepo.list")(
      (sessionId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<Label>, SqlError> =>
        listByRootIds(sql, {
          table: "labels",
          where: sql`session_id = ${sessionId}`,
          orderBy: sql.literal("name ASC, id ASC"),
          page,
          loadByIds: (ids) => load(sessionId, ids),
          idOf: (label) => label.id
        }),
      orStoreUnavailable
    )

    const setOnChat = Effect.fnUntraced(
      function*(sessionId: string, chatId: string, labelId: string, on: boolean) {
        yield* sql`DELETE FROM chat_labels WHERE session_id = ${sessionId} AND chat_id = ${chatId} AND label_id = ${labelId}`
        if (on) yield* sql`INSERT INTO chat_labels ${sql.insert({ session_id: sessionId, chat_id: chatId, label_id: labelId })}`
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    /** The labels a chat carries, by name. */
    const ofChat = storeOperation(
      (sessionId: string, chatId: string) =>
        sql<LabelRecord>`SELECT l.id, l.name, l.color FROM chat_labels c JOIN labels l ON l.session_id = c.session_id AND l.id = c.label_id
          WHERE c.session_id = ${sessionId} AND c.chat_id = ${chatId} ORDER BY l.name, l.id`.pipe(Effect.map((rows) => rows.map(toLabel))))

    return { upsert, remove, find, list, setOnChat, ofChat } as const
  })
)
