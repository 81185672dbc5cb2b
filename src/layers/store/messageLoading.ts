import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Array as Arr, Effect } from "effect"
import type { Message } from "../../domain/Message.js"
import { fromRecord, type HistoryRecord, type MessageRecord, type ReactionRecord, toMessage, type VoteRecord } from "./messageRecords.js"

/**
 * The API form of exactly these messages of a session (with their status histories, reactions
 * and votes), in any order. Shared by the message list and the chat list (a chat's newest message).
 */
export const loadMessages = (
  sql: SqlClient.SqlClient,
  sessionId: string,
  ids: ReadonlyArray<string>
): Effect.Effect<Array<Message>, SqlError> =>
  Effect.gen(function*() {
    if (ids.length === 0) return []
    const records = yield* sql<MessageRecord>`SELECT * FROM messages
      WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`
    const history = yield* sql<HistoryRecord>`SELECT message_id, status, at FROM message_status_history
      WHERE message_id IN ${sql.in(ids)}`
    const reactions = yield* sql<ReactionRecord>`SELECT message_id, from_id, emoji, at FROM message_reactions
      WHERE message_id IN ${sql.in(ids)}`
    const votes = yield* sql<VoteRecord>`SELECT message_id, voter, options, at FROM poll_votes
      WHERE message_id IN ${sql.in(ids)}`
    const historyOf = Arr.groupBy(history, (entry) => entry.message_id)
    const reactionsOf = Arr.groupBy(reactions, (reaction) => reaction.message_id)
    const votesOf = Arr.groupBy(votes, (vote) => vote.message_id)
    return records.map((record) =>
      toMessage(fromRecord(record), historyOf[record.id] ?? [], reactionsOf[record.id] ?? [], votesOf[record.id] ?? [])
    )
  })
