import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type {
  ContactCard,
  Edit,
  LinkPreview,
  Location,
  Message,
  MessageFilter,
  MessageSource,
  MessageMedia,
  MessageStatus,
  MessageType,
  TypingMs
} from "../../../domain/Message.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

/** What the runtime works with: a message as stored (see `messageRecords` for the table's shape). */
export interface MessageError {
  readonly code: string
  readonly message: string
}

/** What the Store knows of a message's media; the bytes are in the MediaStore when `stored`. */
export interface MediaRecord extends MessageMedia {
  /** False for incoming media not kept (`INCOMING_MEDIA=skip`, or the download failed). */
  readonly stored: boolean
}

/** A poll as stored: its definition, the secret base64 (null for a received poll without one). */
export interface PollRecord {
  readonly name: string
  readonly options: ReadonlyArray<string>
  readonly selectableCount: number
  readonly secret: string | null
}

/** How a send is to go out (outbound messages only). */
export interface SendOptions {
  readonly typingMs?: TypingMs | undefined
  /** False when the caller asked for no link preview (default: a text's first URL gets one). */
  readonly linkPreview?: boolean | undefined
  /** A status update's audience (chat ids), fixed when it was accepted so that a resend reaches the same people. */
  readonly statusAudience?: ReadonlyArray<string> | undefined
  /** A text status update's look. */
  readonly statusStyle?: { readonly backgroundColor: string | null; readonly font: number | null } | undefined
}

/** What a message carries besides text and media; all null/false/empty for a plain message. */
export interface MessageExtras {
  readonly location: Location | null
  readonly contacts: ReadonlyArray<ContactCard> | null
  readonly poll: PollRecord | null
  readonly linkPreview: LinkPreview | null
  readonly forwarded: boolean
  readonly editedAt: string | null
  /** Earlier texts (or captions), oldest first. */
  readonly edits: ReadonlyArray<Edit>
  readonly revoked: boolean
  readonly starred: boolean
  readonly pinned: boolean
  readonly sendOptions: SendOptions | null
  /** `history`: imported from the phone's history sync, not received live. */
  readonly source: MessageSource
}

export const noExtras: MessageExtras = {
  location: null,
  contacts: null,
  poll: null,
  linkPreview: null,
  forwarded: false,
  editedAt: null,
  edits: [],
  revoked: false,
  starred: false,
  pinned: false,
  sendOptions: null,
  source: "live"
}

export interface MessageRow extends MessageExtras {
  readonly id: string
  readonly sessionId: string
  readonly chatId: string
  readonly from: string
  readonly to: string
  readonly fromMe: boolean
  readonly type: MessageType
  readonly text: string | null
  readonly caption: string | null
  readonly media: MediaRecord | null
  readonly status: MessageStatus
  readonly ack: number
  readonly error: MessageError | null
  readonly engineMessageId: string | null
  readonly quotedMessageId: string | null
  /** Chat ids mentioned in the text, kept so that a resend after a restart mentions them too. */
  readonly mentions: ReadonlyArray<string> | null
  readonly batchId: string | null
  readonly timestamp: string
  readonly createdAt: string
  readonly updatedAt: string
}

/** What a network receipt says of the message it names. */
export interface StatusReceipt {
  readonly engineMessageId: string
  readonly status: MessageStatus
  readonly error?: MessageError | undefined
}

/** A status change that took effect. */
export interface StatusTransition {
  readonly previousStatus: MessageStatus
  readonly row: MessageRow
}


export class MessageRepo extends Context.Tag("switchboard/MessageRepo")<MessageRepo, {
  readonly insert: (row: MessageRow) => Effect.Effect<void, StoreUnavailable>
  /** Stores new rows as `insert` does each, the rows and their first history entries in one statement each. */
  readonly insertAll: (rows: ReadonlyArray<MessageRow>) => Effect.Effect<void, StoreUnavailable>
  readonly setReaction: (messageId: string, from: string, emoji: string, at: string) => Effect.Effect<boolean, StoreUnavailable>
  readonly reviseUnreadable: (id: string, content: Pick<MessageRow, "text" | "type" | "caption" | "media" | "error">, at: string) => Effect.Effect<boolean, StoreUnavailable>
  readonly findById: (sessionId: string, id: string) => Effect.Effect<Option.Option<Message>, StoreUnavailable>
  readonly findRow: (id: string) => Effect.Effect<Option.Option<MessageRow>, StoreUnavailable>
  readonly findByEngineId: (sessionId: string, engineMessageId: string) => Effect.Effect<Option.Option<MessageRow>, StoreUnavailable>
  readonly list: (sessionId: string, filter: MessageFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<Message>, StoreUnavailable>
  readonly updateStatus: (id: string, status: "failed" | "pending" | "sent" | "delivered" | "read" | "played", at: string, error?: MessageError | undefined) => Effect.Effect<Option.Option<StatusTransition>, StoreUnavailable>
  /**
   * `updateStatus` for network receipts, which name their messages by engine id (no read of the
   * rows first), in order, all at `at`: each one's transition, in the same order, as if they were
   * applied one after another, in a few statements for them all.
   */
  readonly updateStatusesByEngineId: (
    sessionId: string,
    receipts: ReadonlyArray<StatusReceipt>,
    at: string
  ) => Effect.Effect<ReadonlyArray<Option.Option<StatusTransition>>, StoreUnavailable>
  /**
   * The API form of messages transitions just took out of `pending` (what `message.sent`
   * carries), in the same order, built from the transitions without reading the messages again
   * (their reactions and votes are read together).
   */
  readonly leftPendingAll: (transitions: ReadonlyArray<StatusTransition>) => Effect.Effect<ReadonlyArray<Message>, StoreUnavailable>
  readonly listUnsent: (sessionId: string) => Effect.Effect<ReadonlyArray<MessageRow>, StoreUnavailable>
  readonly countUnsent: (sessionIds: readonly string[]) => Effect.Effect<number, StoreUnavailable>
  readonly countBySession: (sessionId: string) => Effect.Effect<number, StoreUnavailable>
  /**
   * Replaces the text (or the caption, for media) with `text`, keeping the one it replaces in
   * `edits`; the replaced text, or none when the message is unknown, revoked, or already says that.
   */
  readonly edit: (id: string, text: string, at: string) => Effect.Effect<Option.Option<string>, StoreUnavailable>
  /** Marks a message revoked and clears its text, caption and media; false when it already was. */
  readonly revoke: (id: string, at: string) => Effect.Effect<boolean, StoreUnavailable>
  readonly setFlag: (id: string, flag: "starred" | "pinned", value: boolean, at: string) => Effect.Effect<boolean, StoreUnavailable>
  readonly setLinkPreview: (id: string, preview: LinkPreview, at: string) => Effect.Effect<void, StoreUnavailable>
  /**
   * Records `voter`'s whole choice on a poll (empty: withdrawn), unless a later vote of theirs
   * is already recorded; false when nothing changed.
   */
  readonly recordVote: (messageId: string, voter: string, options: ReadonlyArray<string>, at: string) => Effect.Effect<boolean, StoreUnavailable>
}>() {}
