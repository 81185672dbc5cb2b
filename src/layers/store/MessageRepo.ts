import {
  type MessageError,
  MessageRepo,
  type MessageRow,
  type StatusReceipt,
  type StatusTransition
} from "../../runtime/ports/store/MessageRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Array as Arr, Effect, Layer, Option } from "effect"
import {
  ackOf,
  isStatusAdvance,
  type LinkPreview,
  type Message,
  type MessageFilter,
  type MessageStatus
} from "../../domain/Message.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { fromCount, toIntegerBoolean, toJsonColumn } from "./columns.js"
import { foldOwnMessagesPerChat, recordChatActivity } from "./chatActivity.js"
import { loadMessages as loadSessionMessages } from "./messageLoading.js"
import { readTogether } from "./readTogether.js"
import {
  fromRecord,
  type HistoryRecord,
  type MessageRecord,
  type ReactionRecord,
  toMessage,
  toRecord,
  type VoteRecord
} from "./messageRecords.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"
import { atomically } from "./atomically.js"

/** The status a receipt for each status usually follows (none for `pending`, which nothing precedes). */
const usualPredecessor: Record<MessageStatus, MessageStatus | undefined> = {
  pending: undefined,
  failed: "pending",
  sent: "pending",
  delivered: "sent",
  read: "delivered",
  played: "read"
}

/**
 * Receipts cut, in order, into runs in which no message is named twice: each run can be applied
 * all at once, and the runs one after another keep the order of a message's receipts.
 */
const runsOfDistinctMessages = (receipts: ReadonlyArray<StatusReceipt>): Array<Array<StatusReceipt>> => {
  const runs: Array<Array<StatusReceipt>> = []
  let named = new Set<string>()
  for (const receipt of receipts) {
    if (runs.length === 0 || named.has(receipt.engineMessageId)) {
      runs.push([])
      named = new Set()
    }
    named.add(receipt.engineMessageId)
    runs[runs.length - 1]!.push(receipt)
  }
  return runs
}

/** Receipts of a run that move their messages alike (same status, same error): one UPDATE each. */
const alikeMoves = (run: ReadonlyArray<StatusReceipt>) => {
  const groups = new Map<string, { status: MessageStatus; error: MessageError | undefined; engineMessageIds: Array<string> }>()
  for (const receipt of run) {
    const key = `${receipt.status} ${toJsonColumn(receipt.error) ?? ""}`
    const group = groups.get(key) ?? { status: receipt.status, error: receipt.error, engineMessageIds: [] }
    group.engineMessageIds.push(receipt.engineMessageId)
    groups.set(key, group)
  }
  return [...groups.values()]
}

/** A status move of the message `which` selects: what it was and the row after, if it moved. */
type StatusMove = (
  which: Fragment,
  next: MessageStatus,
  at: string,
  error: MessageError | undefined
) => Effect.Effect<Option.Option<StatusTransition>, SqlError>

/** Rows per INSERT of `insertAll`: ~30 parameters each, inside SQLite's and Postgres' limits. */
const INSERT_CHUNK = 100

export const SqlMessageRepo = Layer.scoped(
  MessageRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const allOrNothing = atomically(sql)

    const selectRow = (condition: Fragment) =>
      sql<MessageRecord>`SELECT * FROM messages WHERE ${condition} ORDER BY created_at ASC, id ASC`.pipe(
        Effect.map((records) => Option.map(Option.fromNullable(records[0]), fromRecord))
      )

    const appendHistory = (messageId: string, status: MessageStatus, at: string) =>
      sql`INSERT INTO message_status_history ${sql.insert({ message_id: messageId, status, at })}`

    const loadMessages = (sessionId: string, ids: ReadonlyArray<string>) => loadSessionMessages(sql, sessionId, ids)

    const insert = Effect.fnUntraced(
      function*(row: MessageRow) {
        yield* sql`INSERT INTO messages ${sql.insert({ ...toRecord(row) })}`
        yield* appendHistory(row.id, row.status, row.createdAt)
        yield* recordChatActivity(sql, [row])
      },
      allOrNothing,
      orStoreUnavailable
    )

    const insertAll = (rows: ReadonlyArray<MessageRow>) =>
      rows.length === 1
        ? insert(rows[0]!)
        : Effect.forEach(Arr.chunksOf(rows, INSERT_CHUNK), (chunk) =>
          Effect.suspend(() =>
            Effect.zipRight(
              sql`INSERT INTO messages ${sql.insert(chunk.map((row) => ({ ...toRecord(row) })))}`,
              sql`INSERT INTO message_status_history ${sql.insert(chunk.map((row) => ({ message_id: row.id, status: row.status, at: row.createdAt })))}`
            )
          ), { discard: true }).pipe(
            // A chat's activity row by row (several rows of one chat cannot share an upsert on
            // Postgres), the account's own messages to one chat folded into one.
            Effect.zipRight(Effect.suspend(() => recordChatActivity(sql, foldOwnMessagesPerChat(rows)))),
            allOrNothing,
            orStoreUnavailable
          )

    const findById = storeOperation(
      (sessionId: string, id: string) =>
        Effect.map(loadMessages(sessionId, [id]), (messages) => Option.fromNullable(messages[0])))

    /** The stored row of a message, whatever its session (for the runtime's own bookkeeping). */
    const findRow = storeOperation((id: string) => selectRow(sql`id = ${id}`))

    const findByEngineId = storeOperation(
      (sessionId: string, engineMessageId: string) =>
        selectRow(sql`session_id = ${sessionId} AND engine_message_id = ${engineMessageId}`))

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
    const advance: StatusMove = (which, next, at, error) =>
      Effect.flatMap(advanceFromUsual(which, next, at, error), (moved) =>
        Option.isSome(moved) ? Effect.succeed(moved) : advanceFromCurrent(which, next, at, error))

    /**
     * Receipts nearly always come in order (pending → sent → delivered → read), so the move is
     * first tried as one compare-and-set from the status that usually comes just before `next`:
     * when it takes, that status is the previous one and the row comes back from the UPDATE,
     * with no read before it. The first matching row is the one `selectRow` would have read.
     */
    const advanceFromUsual: StatusMove = (which, next, at, error) =>
      Effect.gen(function*() {
        const usual = usualPredecessor[next]
        if (usual === undefined) return Option.none()
        const newError = error === undefined ? sql`error` : sql`${toJsonColumn(error)}`
        const [moved] = yield* sql<MessageRecord>`UPDATE messages
          SET status = ${next}, ack = ${ackOf[next]}, error = ${newError}, updated_at = ${at}
          WHERE id = (SELECT id FROM messages WHERE ${which} ORDER BY created_at ASC, id ASC LIMIT 1)
            AND status = ${usual}
          RETURNING *`
        if (moved === undefined) return Option.none()
        yield* appendHistory(moved.id, next, at)
        return Option.some({ previousStatus: usual, row: fromRecord(moved) })
      })

    /** The general case: read the current status, then a compare-and-set on it. */
    const advanceFromCurrent: StatusMove = (which, next, at, error) =>
      Effect.gen(function*() {
        const current = yield* selectRow(which)
        if (Option.isNone(current) || !isStatusAdvance(current.value.status, next)) return Option.none()
        const id = current.value.id
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
        if (updated.length === 0) return yield* advanceFromCurrent(which, next, at, error)
        yield* appendHistory(id, next, at)
        return Option.some({ previousStatus: current.value.status, row })
      })

    const updateStatus = storeOperation(
      (id: string, status: MessageStatus, at: string, error?: MessageError | undefined) =>
        advance(sql`id = ${id}`, status, at, error), allOrNothing)

    /**
     * One run of receipts (no message twice): for each kind of move, one compare-and-set from
     * the status it usually follows, for all the run's messages at once (the row each would
     * select: the first with that engine id), then one INSERT of their history. A receipt that
     * did not take that way (out of order, repeated, for an unknown message) is decided alone,
     * from the status read, as `advance` does: rare, and never an advance missed.
     */
    const advanceRun = (sessionId: string, run: ReadonlyArray<StatusReceipt>, at: string) =>
      Effect.gen(function*() {
        const moved = new Map<string, StatusTransition>()
        for (const { engineMessageIds, error, status } of alikeMoves(run)) {
          const usual = usualPredecessor[status]
          if (usual === undefined) continue
          const newError = error === undefined ? sql`error` : sql`${toJsonColumn(error)}`
          // The rows are found by engine id in a subquery, and only then is their status tested:
          // with `session_id = … AND status = …` beside the engine ids, SQLite (no statistics)
          // walked the (session_id, status) index: each run of receipts read every message of
          // the session in the status it moves from (every one left at `sent` for a run of
          // `delivered`), ~120 µs a row with 25,000 of them against 12 µs this way.
          const records = yield* sql<MessageRecord>`UPDATE messages
            SET status = ${status}, ack = ${ackOf[status]}, error = ${newError}, updated_at = ${at}
            WHERE id IN (SELECT candidate.id FROM messages candidate
                WHERE candidate.session_id = ${sessionId} AND candidate.engine_message_id IN ${sql.in(engineMessageIds)}
                  AND NOT EXISTS (SELECT 1 FROM messages earlier
                    WHERE earlier.session_id = candidate.session_id AND earlier.engine_message_id = candidate.engine_message_id
                      AND (earlier.created_at < candidate.created_at OR (earlier.created_at = candidate.created_at AND earlier.id < candidate.id))))
              AND status = ${usual}
            RETURNING *`
          for (const record of records) moved.set(record.engine_message_id!, { previousStatus: usual, row: fromRecord(record) })
        }
        if (moved.size > 0) {
          yield* sql`INSERT INTO message_status_history ${
            sql.insert([...moved.values()].map(({ row }) => ({ message_id: row.id, status: row.status, at })))
          }`
        }
        return yield* Effect.forEach(run, (receipt) => {
          const transition = moved.get(receipt.engineMessageId)
          return transition !== undefined
            ? Effect.succeed(Option.some(transition))
            : advanceFromCurrent(
              sql`session_id = ${sessionId} AND engine_message_id = ${receipt.engineMessageId}`,
              receipt.status,
              at,
              receipt.error
            )
        })
      })

    /**
     * Receipts that came together (a chunk of a session's), in the few statements of a run each:
     * on Postgres every statement waits its turn of a busy event loop, and a chunk of `sent`
     * receipts was ~4 statements each.
     */
    const updateStatusesByEngineId = storeOperation(
      (sessionId: string, receipts: ReadonlyArray<StatusReceipt>, at: string) =>
        Effect.map(
          Effect.forEach(runsOfDistinctMessages(receipts), (run) => advanceRun(sessionId, run, at)),
          (runs) => runs.flat()
        ),
      allOrNothing
    )

    /**
     * Messages that just left `pending` have in their history only their acceptance and this
     * move, so only their reactions and poll votes are read (together) to give their API form.
     */
    const leftPendingAll = storeOperation(
      (transitions: ReadonlyArray<StatusTransition>) =>
        Effect.gen(function*() {
          if (transitions.length === 0) return []
          const ids = transitions.map(({ row }) => row.id)
          const withPolls = transitions.filter(({ row }) => row.poll !== null).map(({ row }) => row.id)
          const reactions = yield* sql<ReactionRecord>`SELECT message_id, from_id, emoji, at FROM message_reactions
            WHERE message_id IN ${sql.in(ids)}`
          const votes = withPolls.length === 0
            ? []
            : yield* sql<VoteRecord>`SELECT message_id, voter, options, at FROM poll_votes WHERE message_id IN ${sql.in(withPolls)}`
          return transitions.map(({ previousStatus, row }) => {
            const history: Array<HistoryRecord> = [
              { message_id: row.id, status: previousStatus, at: row.createdAt },
              { message_id: row.id, status: row.status, at: row.updatedAt }
            ]
            const own = <R extends { readonly message_id: string }>(records: ReadonlyArray<R>) =>
              records.filter((record) => record.message_id === row.id)
            return toMessage(row, history, own(reactions), own(votes))
          })
        }))

    /**
     * Outbound messages accepted but not yet acknowledged by the network, to send after a
     * restart. They already carry their engine id, so a resend is the same message. Every actor
     * reads its own as it starts: those starting together (a restore) share a query.
     */
    const listUnsent = yield* readTogether({
      readMany: (sessionIds: ReadonlyArray<string>) =>
        sql<MessageRecord>`SELECT * FROM messages
          WHERE session_id IN ${sql.in(sessionIds)} AND from_me = 1 AND status = ${"pending"}
          ORDER BY created_at ASC, id ASC`.pipe(
          Effect.map((records) => Arr.groupBy(records.map(fromRecord), (row) => row.sessionId)),
          Effect.map((bySession) => new Map(Object.entries(bySession))),
          orStoreUnavailable
        ),
      absent: [] as ReadonlyArray<MessageRow>,
      maxKeys: 500
    })

    /** How many of those the given sessions have, together (what a graceful shutdown waits for). */
    const countUnsent = storeOperation(
      (sessionIds: ReadonlyArray<string>) =>
        sessionIds.length === 0
          ? Effect.succeed(0)
          : sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM messages
            WHERE session_id IN ${sql.in(sessionIds)} AND from_me = 1 AND status = ${"pending"}`.pipe(
            Effect.map(([row]) => fromCount(row?.total))
          ))

    const countBySession = storeOperation(
      (sessionId: string) =>
        sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM messages WHERE session_id = ${sessionId}`.pipe(
          Effect.map(([row]) => fromCount(row?.total))
        ))

    /**
     * A message first stored as unreadable (`unknown`, e.g. DECRYPTION_FAILED) arrived again and
     * can be read: keep its id and history, take the content (media included), and the error
     * only if keeping the media failed.
     */
    const reviseUnreadable = storeOperation(
      (id: string, content: Pick<MessageRow, "type" | "text" | "caption" | "media" | "error">, at: string) =>
        sql<{ readonly id: string }>`UPDATE messages SET type = ${content.type}, body = ${content.text},
          caption = ${content.caption}, media = ${toJsonColumn(content.media)}, error = ${toJsonColumn(content.error)},
          updated_at = ${at}
          WHERE id = ${id} AND type = ${"unknown"} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)))

    /**
     * Sets `from`'s reaction on a message, replacing theirs if any; `emoji` "" takes it back.
     * False when nothing changed (the same reaction again, or taking back one never set).
     */
    const setReaction = Effect.fnUntraced(
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

    /**
     * The edit is a compare-and-set on the text just read (a concurrent edit makes us read
     * again), so no earlier text is lost from `edits`.
     */
    const applyEdit = (id: string, text: string, at: string): Effect.Effect<Option.Option<string>, SqlError> =>
      Effect.gen(function*() {
        const current = yield* selectRow(sql`id = ${id}`)
        if (Option.isNone(current) || current.value.revoked) return Option.none()
        const { caption, edits, text: body } = current.value
        const isText = body !== null
        const previous = (isText ? body : caption) ?? ""
        if (previous === text) return Option.none()
        const history = toJsonColumn([...edits, { text: previous, at }])
        const updated = isText
          ? yield* sql<{ readonly id: string }>`UPDATE messages SET body = ${text}, edits = ${history}, edited_at = ${at},
              updated_at = ${at} WHERE id = ${id} AND body = ${previous} RETURNING id`
          : yield* sql<{ readonly id: string }>`UPDATE messages SET caption = ${text}, edits = ${history}, edited_at = ${at},
              updated_at = ${at} WHERE id = ${id} AND COALESCE(caption, '') = ${previous} RETURNING id`
        if (updated.length === 0) return yield* applyEdit(id, text, at)
        return Option.some(previous)
      })

    const edit = storeOperation(applyEdit, sql.withTransaction)

    const revoke = storeOperation(
      (id: string, at: string) =>
        sql<{ readonly id: string }>`UPDATE messages SET revoked = 1, body = NULL, caption = NULL, media = NULL,
          link_preview = NULL, updated_at = ${at} WHERE id = ${id} AND revoked = 0 RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0)
        ))

    const setFlag = storeOperation(
      (id: string, flag: "starred" | "pinned", value: boolean, at: string) =>
        sql<{ readonly id: string }>`UPDATE messages SET ${sql.literal(flag)} = ${toIntegerBoolean(value)}, updated_at = ${at}
          WHERE id = ${id} AND ${sql.literal(flag)} <> ${toIntegerBoolean(value)} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0)
        ))

    const setLinkPreview = storeOperation(
      (id: string, preview: LinkPreview, at: string) =>
        sql`UPDATE messages SET link_preview = ${toJsonColumn(preview)}, updated_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid))

    /** Votes can arrive out of order (a reconnect replays): an older one never replaces a newer one. */
    const recordVote = storeOperation(
      (messageId: string, voter: string, options: ReadonlyArray<string>, at: string) =>
        sql<{ readonly message_id: string }>`INSERT INTO poll_votes
          ${sql.insert({ message_id: messageId, voter, options: JSON.stringify(options), at })}
          ON CONFLICT (message_id, voter) DO UPDATE SET options = excluded.options, at = excluded.at
          WHERE poll_votes.at <= excluded.at AND poll_votes.options <> excluded.options
          RETURNING message_id`.pipe(Effect.map((rows) => rows.length > 0)))

    return {
      edit,
      revoke,
      setFlag,
      setLinkPreview,
      recordVote,
      insert,
      insertAll,
      setReaction,
      reviseUnreadable,
      findById,
      findRow,
      findByEngineId,
      list,
      updateStatus,
      updateStatusesByEngineId,
      leftPendingAll,
      listUnsent,
      countUnsent,
      countBySession
    } as const
  })
)
