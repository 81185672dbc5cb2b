import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Message, MessageFilter, MessageMedia, MessageStatus, MessageType } from "../../../domain/Message.js"
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

export interface MessageRow {
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

/** A status change that took effect. */
export interface StatusTransition {
  readonly previousStatus: MessageStatus
  readonly row: MessageRow
}


export class MessageRepo extends Context.Tag("switchboard/MessageRepo")<MessageRepo, {
  readonly insert: (row: MessageRow) => Effect.Effect<void, StoreUnavailable>
  readonly setReaction: (messageId: string, from: string, emoji: string, at: string) => Effect.Effect<boolean, StoreUnavailable>
  readonly reviseUnreadable: (id: string, content: Pick<MessageRow, "text" | "type" | "caption" | "media" | "error">, at: string) => Effect.Effect<boolean, StoreUnavailable>
  readonly findById: (sessionId: string, id: string) => Effect.Effect<Option.Option<Message>, StoreUnavailable>
  readonly findRow: (id: string) => Effect.Effect<Option.Option<MessageRow>, StoreUnavailable>
  readonly findByEngineId: (sessionId: string, engineMessageId: string) => Effect.Effect<Option.Option<MessageRow>, StoreUnavailable>
  readonly list: (sessionId: string, filter: MessageFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<Message>, StoreUnavailable>
  readonly updateStatus: (id: string, status: "failed" | "pending" | "sent" | "delivered" | "read" | "played", at: string, error?: MessageError | undefined) => Effect.Effect<Option.Option<StatusTransition>, StoreUnavailable>
  readonly listUnsent: (sessionId: string) => Effect.Effect<MessageRow[], StoreUnavailable>
  readonly countUnsent: (sessionIds: readonly string[]) => Effect.Effect<number, StoreUnavailable>
  readonly countBySession: (sessionId: string) => Effect.Effect<number, StoreUnavailable>
}>() {}
