import { BatchRepo, type BatchRecord } from "../../runtime/ports/store/BatchRepo.js"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { MessageStatus } from "../../domain/Message.js"
import type { MessageRow } from "../../runtime/ports/store/MessageRepo.js"
import { recordChatActivity } from "./chatActivity.js"
import { toRecord } from "./messageRecords.js"
import { orStoreUnavailable } from "./storeFailure.js"

const CANCELLED = { code: "CANCELLED", message: "the batch was cancelled before this message went out" }

/** Bulk sends: a batch row, and its messages as ordinary messages carrying its id. */
export const SqlBatchRepo = Layer.effect(
  BatchRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The batch and every one of its messages, all or nothing: a 202 means all are stored. */
    const insert = Effect.fnUntraced(
      function*(batch: { readonly id: string; readonly sessionId: string; readonly createdAt: string }, rows: ReadonlyArray<MessageRow>) {
        yield* sql`INSERT INTO batches ${sql.insert({ id: batch.id, session_id: batch.sessionId, total: rows.length, created_at: batch.createdAt })}`
        yield* sql`INSERT INTO messages ${sql.insert(rows.map((row) => ({ ...toRecord(row) })))}`
        yield* sql`INSERT INTO message_status_history ${sql.insert(rows.map((row) => ({ message_id: row.id, status: row.status, at: row.createdAt })))}`
        yield* recordChatActivity(sql, rows)
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const find = Effect.fnUntraced(
      function*(sessionId: string, id: string) {
        const [batch] = yield* sql<{ id: string; session_id: string; total: unknown; cancelled_at: string | null; created_at: string }>`
          SELECT * FROM batches WHERE id = ${id} AND session_id = ${sessionId}`
        if (batch === undefined) return Option.none<BatchRecord>()
        const items = yield* sql<{ id: string; chat_id: string; status: MessageStatus; error: string | null }>`
          SELECT id, chat_id, status, error FROM messages WHERE batch_id = ${id} ORDER BY created_at ASC, id ASC`
        return Option.some<BatchRecord>({
          id: batch.id,
          sessionId: batch.session_id,
          total: Number(batch.total),
          cancelledAt: batch.cancelled_at,
          createdAt: batch.created_at,
          items: items.map((item) => ({
            messageId: item.id,
            chatId: item.chat_id,
            status: item.status,
            error: item.error === null ? null : JSON.parse(item.error)
          }))
        })
      },
      orStoreUnavailable
    )

    /**
     * Marks the batch cancelled and fails its messages that have not gone out. A message the
     * outbound lane already handed to the engine is not `pending` any more and goes on.
     * Returns the ids of the messages it stopped.
     */
    const cancel = Effect.fnUntraced(
      function*(id: string, at: string) {
        yield* sql`UPDATE batches SET cancelled_at = ${at} WHERE id = ${id} AND cancelled_at IS NULL`
        const stopped = yield* sql<{ id: string; chat_id: string }>`UPDATE messages
          SET status = ${"failed"}, ack = ${-1}, error = ${JSON.stringify(CANCELLED)}, updated_at = ${at}
          WHERE batch_id = ${id} AND status = ${"pending"} RETURNING id, chat_id`
        if (stopped.length > 0) {
          yield* sql`INSERT INTO message_status_history ${sql.insert(stopped.map((row) => ({ message_id: row.id, status: "failed", at })))}`
        }
        return stopped.map((row) => ({ messageId: row.id, chatId: row.chat_id, error: CANCELLED }))
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    return { insert, find, cancel } as const
  })
)
