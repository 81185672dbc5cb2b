import type { Effect } from "effect"
import type { CallStatus } from "../domain/Call.js"
import type { JoinRequest, JoinRequestAction, MemberAddMode, ParticipantResult } from "../domain/Group.js"
import type { EngineError, InboundMessage } from "./Engine.js"
import type { MessageTarget } from "./EngineMessageActions.js"

/**
 * The account around the messages: its chat list (archive, pin, mute, unread, delete, older
 * history), its own profile, what it knows of and does to contacts (about, pictures, blocking,
 * LID↔phone), its calls, and what it hears of all that from the network. Ids cross in the
 * API's form (`…@c.us`, `…@lid`, `…@g.us`); engines translate inside. Status updates are plain
 * sends to `status@broadcast` (see `SendCommand.statusAudience`) and plain `MessageReceived`
 * events from it; the runtime keeps them out of the chat list.
 */

/**
 * A chat's newest message, as WhatsApp's app-state patches name it: archiving, marking unread
 * and deleting a chat carry "the last message the account has seen", and history is asked
 * for "before this message".
 */
export interface ChatAnchor {
  readonly target: MessageTarget
  readonly timestamp: Date
}

export type ChatModification =
  | { readonly kind: "archive"; readonly archived: boolean }
  | { readonly kind: "pin"; readonly pinned: boolean }
  /** `null` unmutes. */
  | { readonly kind: "mute"; readonly until: Date | null }
  | { readonly kind: "markUnread" }
  /** Clears the chat and removes it from the account's list (on its other devices too). */
  | { readonly kind: "delete" }

export interface ChatOperations {
  /** Applies a change to the account's own view of the chat (synced to its other devices). */
  readonly modify: (chatId: string, modification: ChatModification, newest: ChatAnchor | null) => Effect.Effect<void, EngineError>
  /**
   * Asks the phone for up to `count` messages older than `oldest` (the oldest the gateway
   * holds; null: the newest ones). They arrive later as a `HistoryReceived` event.
   */
  readonly requestHistory: (chatId: string, count: number, oldest: ChatAnchor | null) => Effect.Effect<void, EngineError>
}

/** The account's own profile as the network shows it. */
export interface OwnProfile {
  readonly name: string | null
  readonly about: string | null
  readonly pictureUrl: string | null
}

export interface ProfileOperations {
  readonly get: Effect.Effect<OwnProfile, EngineError>
  readonly setName: (name: string) => Effect.Effect<void, EngineError>
  readonly setAbout: (about: string) => Effect.Effect<void, EngineError>
  /** A 640×640 JPEG (the gateway scales it); `null` removes the picture. */
  readonly setPicture: (jpeg: Uint8Array | null) => Effect.Effect<void, EngineError>
}

/** What the network tells of a person beyond their ids. */
export interface ContactProfile {
  readonly pushName: string | null
  readonly about: string | null
  readonly isBusiness: boolean
}

/** What the network says of a LID or a phone number: the other id, when it tells. */
export interface IdPair {
  readonly lid: string | null
  readonly phone: string | null
}

export interface AccountContactOperations {
  /** Not on WhatsApp (or not visible to the account): `not_found`. */
  readonly profile: (chatId: string) => Effect.Effect<ContactProfile, EngineError>
  /** The URL of a person's (or a group's) picture; null when there is none or it is hidden. */
  readonly pictureUrl: (chatId: string) => Effect.Effect<string | null, EngineError>
  /** Fetches a picture's bytes by the URL `pictureUrl` gave. */
  readonly downloadPicture: (url: string) => Effect.Effect<Uint8Array, EngineError>
  readonly setBlocked: (chatId: string, blocked: boolean) => Effect.Effect<void, EngineError>
  /** Every contact the account has blocked. */
  readonly blocklist: Effect.Effect<ReadonlyArray<string>, EngineError>
  /** Both ids of a person named by one of them (`…@lid` or `…@c.us`), as the network maps them. */
  readonly resolveIds: (chatId: string) => Effect.Effect<IdPair, EngineError>
}

export interface CallOperations {
  /** Rejects a ringing call; `not_found` when it is no longer ringing. */
  readonly reject: (callId: string, from: string) => Effect.Effect<void, EngineError>
}

/** Group operations the account screen adds to the directory's (see `GroupOperations`). */
export interface GroupSettingsChange {
  readonly announce?: boolean | undefined
  readonly restrict?: boolean | undefined
  readonly memberAddMode?: MemberAddMode | undefined
  readonly approval?: boolean | undefined
}

export interface GroupAdminOperations {
  readonly setSettings: (groupId: string, change: GroupSettingsChange) => Effect.Effect<void, EngineError>
  /** A 640×640 JPEG; `null` removes the picture. */
  readonly setPicture: (groupId: string, jpeg: Uint8Array | null) => Effect.Effect<void, EngineError>
  /** Who asks to join (groups with approval on); admins only. */
  readonly joinRequests: (groupId: string) => Effect.Effect<ReadonlyArray<JoinRequest>, EngineError>
  readonly answerJoinRequests: (
    groupId: string,
    participants: ReadonlyArray<string>,
    answer: "approve" | "reject"
  ) => Effect.Effect<ReadonlyArray<ParticipantResult>, EngineError>
}

/** A change to a chat heard from the network (the phone archived it, read it, …): what it says. */
export interface InboundChatChange {
  readonly chatId: string
  readonly name?: string | null | undefined
  readonly archived?: boolean | undefined
  readonly pinned?: boolean | undefined
  readonly mutedUntil?: Date | null | undefined
  /** 0 when the chat was read on another device; -1 when marked unread there. */
  readonly unreadCount?: number | undefined
  /** Cleared and removed on another device. */
  readonly deleted?: boolean | undefined
}

/** A change to a person heard from the network. */
export interface InboundContactChange {
  readonly chatId: string
  readonly pushName?: string | null | undefined
  readonly about?: string | null | undefined
  readonly picture?: "changed" | "removed" | undefined
  readonly blocked?: boolean | undefined
}

/** A call to the account, or what became of it. */
export interface InboundCall {
  readonly callId: string
  readonly from: string
  readonly isVideo: boolean
  readonly isGroup: boolean
  readonly status: CallStatus
  readonly at: Date
}

/**
 * One batch of the phone's history sync (on linking, or answering `requestHistory`): chats with
 * what the phone says of them, and their messages (the account's own included: `fromMe`).
 */
export interface HistoryBatch {
  readonly chats: ReadonlyArray<InboundChatChange>
  readonly messages: ReadonlyArray<InboundMessage>
  readonly contacts: ReadonlyArray<{ readonly chatId: string; readonly name: string | null }>
  /** 0–100 when the phone says how far the sync is; null otherwise. */
  readonly progress: number | null
  /** Whether this batch answers `requestHistory` (on-demand) rather than the sync on linking. */
  readonly onDemand: boolean
}

export interface InboundJoinRequest {
  readonly groupId: string
  readonly participants: ReadonlyArray<string>
  readonly action: JoinRequestAction
  readonly by?: string | null | undefined
}
