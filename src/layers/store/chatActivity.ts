import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { chatTypeOf, STATUS_CHAT_ID } from "../../domain/Chat.js"
import type { MessageRow } from "../../runtime/ports/store/MessageRepo.js"

/** A chat's row key: pagination pages on one text column, so the session and the chat in one. */
export const chatKey = (sessionId: string, chatId: string) => `${sessionId}/${chatId}`

/**
 * The rows whose chat activity `recordChatActivity` writes, with the account's own live messages
 * to one chat folded into one: what those rows do to the chat, applied one by one, is what
 * their newest does (the last of the newest when they tie), written as of the last one (its
 * `updatedAt`), since the account writing sets the unread count to 0. A chat whose rows include
 * any other (received, history: they count one by one) keeps all its rows as they are.
 */
export const foldOwnMessagesPerChat = (rows: ReadonlyArray<MessageRow>): ReadonlyArray<MessageRow> => {
  const foldable = (row: MessageRow) => row.fromMe && row.source !== "history"
  const chatsOfOthers = new Set(rows.filter((row) => !foldable(row)).map((row) => chatKey(row.sessionId, row.chatId)))
  const folded = new Map<string, MessageRow>()
  const kept: Array<MessageRow> = []
  for (const row of rows) {
    const key = chatKey(row.sessionId, row.chatId)
    if (chatsOfOthers.has(key)) {
      kept.push(row)
      continue
    }
    const before = folded.get(key)
    folded.set(key, before === undefined || row.timestamp >= before.timestamp ? row : { ...before, updatedAt: row.updatedAt })
  }
  return folded.size === 0 ? kept : [...kept, ...folded.values()]
}

/**
 * Keeps the chat list in step with the messages, in the transaction that stores them: the
 * chat is created on its first message; a newer message becomes its last one; a message
 * received live counts as unread (after "marked unread", -1, it is the first one), the account
 * writing in the chat means it has read it (as WhatsApp clears the badge), and history never
 * moves the count. Status updates (`status@broadcast`) are no chat of the list.
 */
export const recordChatActivity = (sql: SqlClient.SqlClient, rows: ReadonlyArray<MessageRow>) =>
  Effect.forEach(rows.filter((row) => row.chatId !== STATUS_CHAT_ID), (row) => {
    const receivedLive = row.source === "live" && !row.fromMe
    const unreadAfter = row.source === "history"
      ? sql.literal("chats.unread_count")
      : row.fromMe
      ? sql.literal("0")
      : sql.literal("CASE WHEN chats.unread_count < 0 THEN 1 ELSE chats.unread_count + 1 END")
    return sql`INSERT INTO chats ${sql.insert({
      id: chatKey(row.sessionId, row.chatId),
      session_id: row.sessionId,
      chat_id: row.chatId,
      name: null,
      type: chatTypeOf(row.chatId),
      last_message_id: row.id,
      last_activity_at: row.timestamp,
      unread_count: receivedLive ? 1 : 0,
      archived: 0,
      pinned: 0,
      muted_until: null,
      updated_at: row.updatedAt
    })}
      ON CONFLICT (session_id, chat_id) DO UPDATE SET
        last_message_id = CASE WHEN excluded.last_activity_at >= chats.last_activity_at THEN excluded.last_message_id ELSE chats.last_message_id END,
        last_activity_at = CASE WHEN excluded.last_activity_at >= chats.last_activity_at THEN excluded.last_activity_at ELSE chats.last_activity_at END,
        unread_count = ${unreadAfter},
        updated_at = excluded.updated_at`
  }, { discard: true })
