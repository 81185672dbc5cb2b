import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Array as Arr, Effect, Layer, Option } from "effect"
import { type Chat, type ChatListFilter, chatTypeOf } from "../../domain/Chat.js"
import type { Message } from "../../domain/Message.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { type ChatEdge, type ChatFields, ChatRepo } from "../../runtime/ports/store/ChatRepo.js"
import { chatKey } from "./chatActivity.js"
import { fromIntegerBoolean, toIntegerBoolean } from "./columns.js"
import { type LabelRecord, toLabel } from "./LabelRepo.js"
import { loadMessages } from "./messageLoading.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

interface ChatRecord {
  readonly id: string
  readonly chat_id: string
  readonly name: string | null
  readonly type: string
  readonly last_message_id: string | null
  readonly last_activity_at: string
  readonly unread_count: unknown
  readonly archived: unknown
  readonly pinned: unknown
  readonly muted_until: string | null
  readonly updated_at: string
}

const fieldsOf = (record: ChatRecord): Required<ChatFields> => ({
  name: record.name,
  unreadCount: Number(record.unread_count),
  archived: fromIntegerBoolean(record.archived),
  pinned: fromIntegerBoolean(record.pinned),
  mutedUntil: record.muted_until
})

const columnsOf = (fields: ChatFields) => ({
  ...(fields.name === undefined ? {} : { name: fields.name }),
  ...(fields.unreadCount === undefined ? {} : { unread_count: fields.unreadCount }),
  ...(fields.archived === undefined ? {} : { archived: toIntegerBoolean(fields.archived) }),
  ...(fields.pinned === undefined ? {} : { pinned: toIntegerBoolean(fields.pinned) }),
  ...(fields.mutedUntil === undefined ? {} : { muted_until: fields.mutedUntil })
})

/** The fields of `wanted` that differ from what the chat has. */
const changesBetween = (current: Required<ChatFields>, wanted: ChatFields): ChatFields =>
  Object.fromEntries(
    (Object.keys(wanted) as Array<keyof ChatFields>).flatMap((key) =>
      wanted[key] === undefined || wanted[key] === current[key] ? [] : [[key, wanted[key]]]
    )
  )

const edgeOf = (record: { engine_message_id: string; from_me: unknown; from_id: string; timestamp: string }): ChatEdge => ({
  engineMessageId: record.engine_message_id,
  fromMe: fromIntegerBoolean(record.from_me),
  from: record.from_id,
  timestamp: record.timestamp
})

export const SqlChatRepo = Layer.effect(
  ChatRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The chats of exactly these row ids, with their newest message and labels. A chat without
     * a name of its own shows its group's subject or its contact's name.
     */
    const load = (sessionId: string, ids: ReadonlyArray<string>): Effect.Effect<Array<Chat>, SqlError> =>
      Effect.gen(function*() {
        const records = yield* sql<ChatRecord>`SELECT * FROM chats WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`
        if (records.length === 0) return []
        const chatIds = records.map((record) => record.chat_id)
        const lastIds = records.flatMap((record) => record.last_message_id === null ? [] : [record.last_message_id])
        const lastMessages = new Map<string, Message>((yield* loadMessages(sql, sessionId, lastIds)).map((message) => [message.id, message]))
        const labels = yield* sql<LabelRecord & { readonly chat_id: string }>`SELECT c.chat_id, l.id, l.name, l.color
          FROM chat_labels c JOIN labels l ON l.session_id = c.session_id AND l.id = c.label_id
          WHERE c.session_id = ${sessionId} AND c.chat_id IN ${sql.in(chatIds)} ORDER BY l.name, l.id`
        const labelsOf = Arr.groupBy(labels, (label) => label.chat_id)
        const subjects = yield* sql<{ readonly id: string; readonly subject: string }>`SELECT id, subject FROM chat_groups
          WHERE session_id = ${sessionId} AND id IN ${sql.in(chatIds)}`
        const people = yield* sql<{ readonly id: string; readonly name: string | null }>`SELECT id, name FROM contacts
          WHERE session_id = ${sessionId} AND id IN ${sql.in(chatIds)}`
        const knownNames = new Map([...people.map((p) => [p.id, p.name] as const), ...subjects.map((g) => [g.id, g.subject] as const)])
        return records.map((record): Chat => ({
          chatId: record.chat_id,
          name: record.name ?? knownNames.get(record.chat_id) ?? null,
          type: chatTypeOf(record.chat_id),
          lastMessage: record.last_message_id === null ? null : lastMessages.get(record.last_message_id) ?? null,
          unreadCount: Number(record.unread_count),
          archived: fromIntegerBoolean(record.archived),
          pinned: fromIntegerBoolean(record.pinned),
          mutedUntil: record.muted_until,
          labels: (labelsOf[record.chat_id] ?? []).map(toLabel),
          updatedAt: record.updated_at > record.last_activity_at ? record.updated_at : record.last_activity_at
        }))
      })

    const find = storeOperation(
      (sessionId: string, chatId: string) => Effect.map(load(sessionId, [chatKey(sessionId, chatId)]), (chats) => Option.fromNullable(chats[0])))

    const filterOf = (sessionId: string, filter: ChatListFilter) => {
      const conditions: Array<Fragment> = [sql`session_id = ${sessionId}`]
      if (filter.archived !== undefined) conditions.push(sql`archived = ${toIntegerBoolean(filter.archived)}`)
      if (filter.unread !== undefined) conditions.push(filter.unread ? sql`unread_count <> 0` : sql`unread_count = 0`)
      if (filter.type !== undefined) conditions.push(sql`type = ${filter.type}`)
      if (filter.labelId !== undefined) {
        conditions.push(sql`chat_id IN (SELECT chat_id FROM chat_labels WHERE session_id = ${sessionId} AND label_id = ${filter.labelId})`)
      }
      return sql.and(conditions)
    }

    const list = Effect.fn("ChatRepo.list")(
      (sessionId: string, filter: ChatListFilter, page: Option.Option<PageRequest>): Effect.Effect<Page<Chat>, SqlError> =>
        listByRootIds(sql, {
          table: "chats",
          where: filterOf(sessionId, filter),
          orderBy: sql.literal("last_activity_at DESC, id DESC"),
          page,
          loadByIds: (ids) => load(sessionId, ids),
          idOf: (chat) => chatKey(sessionId, chat.chatId)
        }),
      orStoreUnavailable
    )

    const update = Effect.fnUntraced(
      function*(sessionId: string, chatId: string, fields: ChatFields, at: string, create = false) {
        const [current] = yield* sql<ChatRecord>`SELECT * FROM chats WHERE session_id = ${sessionId} AND chat_id = ${chatId}`
        if (current === undefined) {
          if (!create) return {}
          yield* sql`INSERT INTO chats ${sql.insert({
            id: chatKey(sessionId, chatId),
            session_id: sessionId,
            chat_id: chatId,
            type: chatTypeOf(chatId),
            last_activity_at: at,
            updated_at: at,
            ...columnsOf(fields)
          })}`
          return changesBetween({ name: null, unreadCount: 0, archived: false, pinned: false, mutedUntil: null }, fields)
        }
        const changes = changesBetween(fieldsOf(current), fields)
        if (Object.keys(changes).length === 0) return changes
        yield* sql`UPDATE chats SET ${sql.update({ ...columnsOf(changes), updated_at: at })}
          WHERE session_id = ${sessionId} AND chat_id = ${chatId}`
        return changes
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const edge = (sessionId: string, chatId: string, order: Fragment) =>
      sql<{ engine_message_id: string; from_me: unknown; from_id: string; timestamp: string }>`SELECT engine_message_id, from_me, from_id, timestamp
        FROM messages WHERE session_id = ${sessionId} AND chat_id = ${chatId} AND engine_message_id IS NOT NULL
        ORDER BY ${order} LIMIT 1`.pipe(Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), edgeOf)))

    const edges = Effect.fnUntraced(
      function*(sessionId: string, chatId: string) {
        const newest = yield* edge(sessionId, chatId, sql.literal("timestamp DESC, id DESC"))
        const oldest = yield* edge(sessionId, chatId, sql.literal("timestamp ASC, id ASC"))
        return { newest, oldest }
      },
      orStoreUnavailable
    )

    /** Children first, so foreign keys hold at every statement. */
    const remove = Effect.fnUntraced(
      function*(sessionId: string, chatId: string) {
        const deleted = yield* sql<{ readonly id: string }>`DELETE FROM chats
          WHERE session_id = ${sessionId} AND chat_id = ${chatId} RETURNING id`
        if (deleted.length === 0) return Option.none()
        const messages = yield* sql<{ readonly id: string; readonly media: string | null }>`SELECT id, media FROM messages
          WHERE session_id = ${sessionId} AND chat_id = ${chatId}`
        const ids = messages.map((message) => message.id)
        for (const chunk of Arr.chunksOf(ids, 500)) {
          for (const children of ["message_status_history", "message_reactions", "poll_votes"]) {
            yield* sql`DELETE FROM ${sql(children)} WHERE message_id IN ${sql.in(chunk)}`
          }
        }
        yield* sql`DELETE FROM messages WHERE session_id = ${sessionId} AND chat_id = ${chatId}`
        const messagesWithMedia = messages.flatMap((message) =>
          message.media !== null && (JSON.parse(message.media) as { readonly stored?: boolean }).stored === true ? [message.id] : []
        )
        return Option.some({ messagesWithMedia })
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    return { find, list, update, edges, remove } as const
  })
)
