import { type MessageError, MessageRepo, type MessageRow, type StatusTransition } from "../../runtime/ports/store/MessageRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Array as Arr, Effect, Layer, Option } from "effect"
import { ackOf, isStatusAdvance, type Message, type MessageFilter, type MessageStatus } from "../../domain/Message.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { fromCount, toIntegerBoolean, toJsonColumn } from "./columns.js"
import {
  fromRecord,
  type HistoryRecord,
  type MessageRecord,
  type ReactionRecord,
  toMessage,
  toRecord
} from "./messageRecords.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable } from "./storeFailure.js"


export const SqlMessageRepo = Layer.effect(
  MessageRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const selectRow = (condition: Fragment) =>
      sql<MessageRecord>`SELECT * FROM messages WHERE ${condition} ORDER BY created_at ASC, id ASC`.pipe(
        Effect.map((records) => Option.map(Option.fromNullable(records[0]), fromRecord))
      )

    const appendHistory = (messageId: string, status: MessageStatus, at: string) =>
      sql`INSERT INTO message_status_history ${sql.insert({ message_id: messageId, status, at })}`

    /** The API form of exactly these messages (with their histories and reactions), in any order. */
    const loadMessages = (sessionId: string, ids: ReadonlyArray<string>): Effect.Effect<Array<Message>, SqlError> =>
      Effect.gen(function*() {
        const records = yield* sql<MessageRecord>`SELECT * FROM messages
          WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`
        const history = yield* sql<HistoryRecord>`SELECT message_id, status, at FROM message_status_history
          WHERE message_id IN ${sql.in(ids)}`
        const reactions = yield* sql<ReactionRecord>`SELECT message_id, from_id, emoji, at FROM message_reactions
          WHERE message_id IN ${sql.in(ids)}`
        const historyOf = Arr.groupBy(history, (entry) => entry.message_id)
        const reactionsOf = Arr.groupBy(reactions, (reaction) => reaction.message_id)
        return records.map((record) =>
          toMessage(fromRecord(record), historyOf[record.id] ?? [], reactionsOf[record.id] ?? [])
        )
      })

    const insert = Effect.fn("MessageRepo.insert")(
      function*(row: MessageRow) {
        yield* sql`INSERT INTO messages ${sql.insert({ ...toRecord(row) })}`
        yield* appendHistory(row.id, row.status, row.createdAt)
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const findById = Effect.fn("MessageRepo.findById")(
      (sessionId: string, id: string) =>
        Effect.map(loadMessages(sessionId, [id]), (messages) => Option.fromNullable(messages[0])),
      orStoreUnavailable
    )

    /** The stored row of a message, whatever its session (for the runtime's own bookkeeping). */
    const findRow = Effect.fn("MessageRepo.findRow")((id: string) => selectRow(sql`id = ${id}`), orStoreUnavailable)

    const findByEngineId = Effect.fn("MessageRepo.findByEngineId")(
      (sessionId: string, engineMessageId: string) =>
        selectRow(sql`session_id = ${sessionId} AND engine_message_id = ${engineMessageId}`),
      orStoreUnavailable
    )

    const filterOf = (sessionId: string, filter: MessageFilter) => {
      const conditions: Array<Fragment> = [sql`session_id = ${sessionId}`]
      if (filter.chatId !== undefined) conditions.push(sql`chat_id = ${filter.chatId}`)
      if (filter.direction !== undefined) conditions.push(sql`from_me = ${toIntegerBoolean(filter.direction === "out")}`)
      if (filter.status !== undefined) conditions.push(sql`status = ${filter.status}`)
      if (filter.since !== undefined) conditions.push(sql`timestamp >= ${filter.since}`)
      if (filter.until !== undefined) conditions.push(sql`timestamp <= ${filter.until}`)
      return sql.and(conditions)
    }

    /** Newest first. `since`/`until` compare ISO-8601 UTC text, so pass them normalised. */
    const list = Effect.fn("MessageRepo.list")(
      (sessionId: string, filter: MessageFilter, page: Option.Option<PageRequest>): Effect.Effect<Page<Message>, SqlError> =>
        listByRootIds(sql, {
          table: "messages",
          where: filterOf(sessionId, filter),
          orderBy: sql.literal("timestamp DESC, id DESC"),
          page,
          loadByIds: (ids) => loadMessages(sessionId, ids),
          idOf: (message) => message.id
        }),
      orStoreUnavailable
    )

    /**
     * Moves a message to `next` if that is an advance (statuses never go back), recording the
     * change in its history. The update is a compare-and-set on the status just read, so a
     * concurrent writer (another connection on Postgres) makes us decide again, not overwrite.
     */
    const advance = (
      id: string,
      next: MessageStatus,
      at: string,
      error: MessageError | undefined
    ): Effect.Effect<Option.Option<StatusTransition>, SqlError> =>
      Effect.gen(function*() {
        const current = yield* selectRow(sql`id = ${id}`)
        if (Option.isNone(current) || !isStatusAdvance(current.value.status, next)) return Option.none()
        const row: MessageRow = {
          ...current.value,
          status: next,
          ack: ackOf[next],
          error: error ?? current.value.error,
          updatedAt: at
        }
        const updated = yield* sql<{ readonly id: string }>`UPDATE messages
          SET status = ${row.status}, ack = ${row.ack}, error = ${toJsonColumn(row.error)}, updated_at = ${at}
          WHERE id = ${id} AND status = ${current.value.status} RETURNING id`
        if (updated.length === 0) return yield* advance(id, next, at, error)
        yield* appendHistory(id, next, at)
        return Option.some({ previousStatus: current.value.status, row })
      })

    const updateStatus = Effect.fn("MessageRepo.updateStatus")(
      (id: string, status: MessageStatus, at: string, error?: MessageError | undefined) =>
        advance(id, status, at, error),
      sql.withTransaction,
      orStoreUnavailable
    )

    /**
     * Outbound messages accepted but not yet acknowledged by the network, to send after a
     * restart. They already carry their engine id, so a resend is the same message.
     */
    const listUnsent = Effect.fn("MessageRepo.listUnsent")(
      (sessionId: string) =>
        sql<MessageRecord>`SELECT * FROM messages
          WHERE session_id = ${sessionId} AND from_me = 1 AND status = ${"pending"}
          ORDER BY created_at ASC, id ASC`.pipe(Effect.map((records) => records.map(fromRecord))),
      orStoreUnavailable
    )

    /** How many of those the given sessions have, together (what a graceful shutdown waits for). */
    const countUnsent = Effect.fn("MessageRepo.countUnsent")(
      (sessionIds: ReadonlyArray<string>) =>
        sessionIds.length === 0
          ? Effect.succeed(0)
          : sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM messages
            WHERE session_id IN ${sql.in(sessionIds)} AND from_me = 1 AND status = ${"pending"}`.pipe(
            Effect.map(([row]) => fromCount(row?.total))
          ),
      orStoreUnavailable
    )

    const countBySession = Effect.fn("MessageRepo.countBySession")(
      (sessionId: string) =>
        sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM messages WHERE session_id = ${sessionId}`.pipe(
          Effect.map(([row]) => fromCount(row?.total))
        ),
      orStoreUnavailable
    )

    /**
     * A message first stored as unreadable (`unknown`, e.g. DECRYPTION_FAILED) arrived again and
     * can be read: keep its id and history, take the content (media included), and the error
     * only if keeping the media failed.
     */
    const reviseUnreadable = Effect.fn("MessageRepo.reviseUnreadable")(
      (id: string, content: Pick<MessageRow, "type" | "text" | "caption" | "media" | "error">, at: string) =>
        sql<{ readonly id: string }>`UPDATE messages SET type = ${content.type}, body = ${content.text},
          caption = ${content.caption}, media = ${toJsonColumn(content.media)}, error = ${toJsonColumn(content.error)},
          updated_at = ${at}
          WHERE id = ${id} AND type = ${"unknown"} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
      orStoreUnavailable
    )

    /**
     * Sets `from`'s reaction on a message, replacing theirs if any; `emoji` "" takes it back.
     * False when nothing changed (the same reaction again, or taking back one never set).
     */
    const setReaction = Effect.fn("MessageRepo.setReaction")(
      function*(messageId: string, from: string, emoji: string, at: string) {
        if (emoji === "") {
          const removed = yield* sql<{ readonly message_id: string }>`DELETE FROM message_reactions
            WHERE message_id = ${messageId} AND from_id = ${from} RETURNING message_id`
          return removed.length > 0
        }
        const changed = yield* sql<{ readonly message_id: string }>`INSERT INTO message_reactions
          ${sql.insert({ message_id: messageId, from_id: from, emoji, at })}
          ON CONFLICT (message_id, from_id) DO UPDATE SET emoji = excluded.emoji, at = excluded.at
          WHERE message_reactions.emoji <> excluded.emoji
          RETURNING message_id`
        return changed.length > 0
      },
      orStoreUnavailable
    )

    return {
      insert,
      setReaction,
      reviseUnreadable,
      findById,
      findRow,
      findByEngineId,
      list,
      updateStatus,
      listUnsent,
      countUnsent,
      countBySession
    } as const
  })
)
