import { MessageId, SessionId } from "../../domain/Ids.js"
import {
  ackOf,
  type ContactCard,
  type Edit,
  type LinkPreview,
  type Location,
  Message,
  type MessageStatus,
  type MessageType,
  type PollResults,
  type Reaction
} from "../../domain/Message.js"
import type {
  MediaRecord,
  MessageError,
  MessageRow,
  PollRecord,
  SendOptions
} from "../../runtime/ports/store/MessageRepo.js"
import { fromIntegerBoolean, fromJsonColumn, toIntegerBoolean, toJsonColumn } from "./columns.js"

/**
 * The three shapes of a message: `MessageRow` (what the runtime works with), `MessageRecord`
 * (the `messages` table, snake_case and portable column types) and the API's `Message`.
 */

export interface MessageRecord {
  readonly id: string
  readonly session_id: string
  readonly chat_id: string
  readonly from_id: string
  readonly to_id: string
  readonly from_me: unknown
  readonly type: MessageType
  readonly body: string | null
  readonly caption: string | null
  readonly media: string | null
  readonly status: MessageStatus
  readonly ack: unknown
  readonly error: string | null
  readonly engine_message_id: string | null
  readonly quoted_message_id: string | null
  readonly mentions: string | null
  readonly batch_id: string | null
  readonly timestamp: string
  readonly created_at: string
  readonly updated_at: string
  readonly location: string | null
  readonly contacts: string | null
  readonly poll: string | null
  readonly link_preview: string | null
  readonly forwarded: unknown
  readonly source: string
  readonly edited_at: string | null
  readonly edits: string | null
  readonly revoked: unknown
  readonly starred: unknown
  readonly pinned: unknown
  readonly send_options: string | null
}

export interface HistoryRecord {
  readonly message_id: string
  readonly status: MessageStatus
  readonly at: string
}

export interface ReactionRecord {
  readonly message_id: string
  readonly from_id: string
  readonly emoji: string
  readonly at: string
}

export interface VoteRecord {
  readonly message_id: string
  readonly voter: string
  /** JSON: the options voted for. */
  readonly options: string
  readonly at: string
}

export const fromRecord = (record: MessageRecord): MessageRow => ({
  id: record.id,
  sessionId: record.session_id,
  chatId: record.chat_id,
  from: record.from_id,
  to: record.to_id,
  fromMe: fromIntegerBoolean(record.from_me),
  type: record.type,
  text: record.body,
  caption: record.caption,
  media: fromJsonColumn<MediaRecord>(record.media),
  status: record.status,
  ack: Number(record.ack),
  error: fromJsonColumn<MessageError>(record.error),
  engineMessageId: record.engine_message_id,
  quotedMessageId: record.quoted_message_id,
  mentions: fromJsonColumn<ReadonlyArray<string>>(record.mentions),
  batchId: record.batch_id,
  timestamp: record.timestamp,
  createdAt: record.created_at,
  updatedAt: record.updated_at,
  location: fromJsonColumn<Location>(record.location),
  contacts: fromJsonColumn<ReadonlyArray<ContactCard>>(record.contacts),
  poll: fromJsonColumn<PollRecord>(record.poll),
  linkPreview: fromJsonColumn<LinkPreview>(record.link_preview),
  forwarded: fromIntegerBoolean(record.forwarded),
  editedAt: record.edited_at,
  edits: fromJsonColumn<ReadonlyArray<Edit>>(record.edits) ?? [],
  revoked: fromIntegerBoolean(record.revoked),
  starred: fromIntegerBoolean(record.starred),
  pinned: fromIntegerBoolean(record.pinned),
  sendOptions: fromJsonColumn<SendOptions>(record.send_options),
  source: record.source === "history" ? "history" : "live"
})

export const toRecord = (row: MessageRow): MessageRecord => ({
  id: row.id,
  session_id: row.sessionId,
  chat_id: row.chatId,
  from_id: row.from,
  to_id: row.to,
  from_me: toIntegerBoolean(row.fromMe),
  type: row.type,
  body: row.text,
  caption: row.caption,
  media: toJsonColumn(row.media),
  status: row.status,
  ack: row.ack,
  error: toJsonColumn(row.error),
  engine_message_id: row.engineMessageId,
  quoted_message_id: row.quotedMessageId,
  mentions: toJsonColumn(row.mentions),
  batch_id: row.batchId,
  timestamp: row.timestamp,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
  location: toJsonColumn(row.location),
  contacts: toJsonColumn(row.contacts),
  poll: toJsonColumn(row.poll),
  link_preview: toJsonColumn(row.linkPreview),
  forwarded: toIntegerBoolean(row.forwarded),
  edited_at: row.editedAt,
  edits: row.edits.length === 0 ? null : toJsonColumn(row.edits),
  revoked: toIntegerBoolean(row.revoked),
  starred: toIntegerBoolean(row.starred),
  pinned: toIntegerBoolean(row.pinned),
  send_options: toJsonColumn(row.sendOptions),
  source: row.source
})

/**
 * Where a status sits in a message's life. Statuses only advance, so for entries with the same
 * `at` this is the order they were recorded in (`failed` only ever follows `pending`).
 */
const lifecycleRank: Record<MessageStatus, number> = { ...ackOf, failed: Number.MAX_SAFE_INTEGER }

const byTimeThenLifecycle = (a: HistoryRecord, b: HistoryRecord) =>
  a.at < b.at ? -1 : a.at > b.at ? 1 : lifecycleRank[a.status] - lifecycleRank[b.status]

/** Reactions in the order they were set; ties (same millisecond) by who set them. */
const byTimeThenFrom = (a: ReactionRecord, b: ReactionRecord) =>
  a.at < b.at ? -1 : a.at > b.at ? 1 : a.from_id < b.from_id ? -1 : a.from_id > b.from_id ? 1 : 0

/**
 * A poll with its votes counted: each voter's latest choice (one row each), options in the
 * poll's order; a voter whose choice is empty (withdrawn) counts for nothing.
 */
export const pollResults = (poll: PollRecord, votes: ReadonlyArray<VoteRecord>): PollResults => {
  const choices = [...votes]
    .sort((a, b) => (a.voter < b.voter ? -1 : a.voter > b.voter ? 1 : 0))
    .map((vote) => ({ voter: vote.voter, options: new Set(JSON.parse(vote.options) as ReadonlyArray<string>) }))
    .filter((choice) => choice.options.size > 0)
  return {
    name: poll.name,
    selectableCount: poll.selectableCount,
    options: poll.options.map((name) => {
      const voters = choices.filter((choice) => choice.options.has(name)).map((choice) => choice.voter)
      return { name, votes: voters.length, voters }
    }),
    totalVoters: choices.length
  }
}

export const toMessage = (
  row: MessageRow,
  history: ReadonlyArray<HistoryRecord>,
  reactions: ReadonlyArray<ReactionRecord> = [],
  votes: ReadonlyArray<VoteRecord> = []
) =>
  // Built from rows the gateway wrote itself: not validated again field by field (a Schema
  // class checks every field on construction, ~1% of a send's CPU, where a Message is made for
  // its `message.sent` event). The API still encodes it through the schema on the way out.
  new Message({
    id: row.id as MessageId,
    sessionId: row.sessionId as SessionId,
    chatId: row.chatId,
    from: row.from,
    to: row.to,
    fromMe: row.fromMe,
    type: row.type,
    text: row.text,
    caption: row.caption,
    media: row.media === null
      ? null
      : { mimetype: row.media.mimetype, filename: row.media.filename, size: row.media.size, ptt: row.media.ptt },
    status: row.status,
    ack: row.ack,
    error: row.error,
    timestamp: row.timestamp,
    quotedMessageId: row.quotedMessageId,
    batchId: row.batchId,
    reactions: [...reactions].sort(byTimeThenFrom).map((r): Reaction => ({ emoji: r.emoji, from: r.from_id, at: r.at })),
    statusHistory: [...history].sort(byTimeThenLifecycle).map(({ at, status }) => ({ status, at })),
    location: row.location,
    contacts: row.contacts,
    poll: row.poll === null ? null : pollResults(row.poll, votes),
    linkPreview: row.linkPreview,
    forwarded: row.forwarded,
    editedAt: row.editedAt,
    edits: row.edits,
    revoked: row.revoked,
    starred: row.starred,
    pinned: row.pinned,
    source: row.source
  }, { disableValidation: true })
