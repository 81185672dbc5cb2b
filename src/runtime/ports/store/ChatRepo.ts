import { Context, type Effect, type Option } from "effect"
import type { Chat, ChatListFilter } from "../../../domain/Chat.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

/** What a change sets on a chat: only the fields given. */
export interface ChatFields {
  readonly name?: string | null | undefined
  readonly unreadCount?: number | undefined
  readonly archived?: boolean | undefined
  readonly pinned?: boolean | undefined
  /** ISO-8601; null: not muted. */
  readonly mutedUntil?: string | null | undefined
}

/** A chat's newest message as the engine names it (the anchor of archive/unread/delete/history). */
export interface ChatEdge {
  readonly engineMessageId: string
  readonly fromMe: boolean
  readonly from: string
  readonly timestamp: string
}

/** What deleting a chat removed: its messages whose media bytes are in the MediaStore. */
export interface RemovedChat {
  readonly messagesWithMedia: ReadonlyArray<string>
}

/**
 * The account's chat list. The Store keeps its rows in step with the messages itself (see the
 * SQL `MessageRepo.insert`); this port reads it and applies the account's own changes.
 */
export class ChatRepo extends Context.Tag("switchboard/ChatRepo")<ChatRepo, {
  readonly find: (sessionId: string, chatId: string) => Effect.Effect<Option.Option<Chat>, StoreUnavailable>
  /** Most recent activity first; a chat's labels never take page slots (rule 11). */
  readonly list: (sessionId: string, filter: ChatListFilter, page: Option.Option<PageRequest>) => Effect.Effect<Page<Chat>, StoreUnavailable>
  /**
   * Sets the fields, creating the chat when the network names one the Store has no message of
   * (`create`); the fields that changed (none when the chat is unknown and not created).
   */
  readonly update: (sessionId: string, chatId: string, fields: ChatFields, at: string, create?: boolean) => Effect.Effect<ChatFields, StoreUnavailable>
  /** The chat's newest and oldest messages that the network knows by id. */
  readonly edges: (sessionId: string, chatId: string) => Effect.Effect<{ readonly newest: Option.Option<ChatEdge>; readonly oldest: Option.Option<ChatEdge> }, StoreUnavailable>
  /** Removes the chat and its messages; none when it was not there. */
  readonly remove: (sessionId: string, chatId: string) => Effect.Effect<Option.Option<RemovedChat>, StoreUnavailable>
}>() {}
