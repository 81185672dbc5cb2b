import type { Effect } from "effect"
import type { MessageType, PresenceState } from "../domain/Message.js"
import type { EngineError } from "./Engine.js"

/**
 * What a connection can do to messages already in a chat (edit, revoke, star, pin, vote on a
 * poll), its presence, and what it hears of others doing the same. Chat ids cross in the API's
 * form, as everywhere on the engine boundary.
 */

/** A message of the chat, named as the network knows it. */
export interface MessageTarget {
  readonly engineMessageId: string
  /** Whether this session sent it. */
  readonly fromMe: boolean
  /** Who wrote it (in groups, the participant); this session's own id when `fromMe`. */
  readonly from: string
}

/**
 * A poll as the engines need it to send it again, or to vote on it: WhatsApp encrypts votes
 * with the poll's `secret` (32 bytes, the creation message's `messageSecret`) and names
 * options by the SHA-256 of their text.
 */
export interface PollDefinition {
  readonly name: string
  readonly options: ReadonlyArray<string>
  /** How many options a voter may pick; 0 means any number. */
  readonly selectableCount: number
  /** Null for a received poll whose secret did not come along (it cannot be voted on then). */
  readonly secret: Uint8Array | null
}

/** A poll the Store holds, looked up by an engine to decrypt a vote on it. */
export interface StoredPoll extends PollDefinition {
  readonly chatId: string
  readonly fromMe: boolean
  /** Who created it (this session's own id when `fromMe`). */
  readonly from: string
}

/** Replaces the text of a message this session sent (or the caption, for media: `type`). */
export interface EditCommand {
  readonly chatId: string
  readonly target: MessageTarget
  /** The type of the edited message: `text`, or the media kind whose caption changes. */
  readonly type: MessageType
  readonly text: string
}

export interface PinCommand {
  readonly chatId: string
  readonly target: MessageTarget
  readonly pinned: boolean
  /** How long the pin lasts (WhatsApp offers 24 hours, 7 days and 30 days). */
  readonly durationSeconds: number
}

export interface PollVoteCommand {
  readonly chatId: string
  readonly target: MessageTarget
  readonly poll: PollDefinition
  /** The options voted for (texts of `poll.options`); empty withdraws the vote. */
  readonly options: ReadonlyArray<string>
}

export interface MessageActionOperations {
  readonly edit: (command: EditCommand) => Effect.Effect<void, EngineError>
  /** Deletes the message for everyone in the chat. */
  readonly revoke: (chatId: string, target: MessageTarget) => Effect.Effect<void, EngineError>
  /** Stars are the account's own bookmarks (synced to its other devices, not shown to the chat). */
  readonly star: (chatId: string, target: MessageTarget, starred: boolean) => Effect.Effect<void, EngineError>
  readonly pin: (command: PinCommand) => Effect.Effect<void, EngineError>
  readonly votePoll: (command: PollVoteCommand) => Effect.Effect<void, EngineError>
}

/** The account's own presence, everywhere or in one chat. */
export type PresenceCommand =
  | { readonly state: "online" | "offline" }
  | { readonly chatId: string; readonly state: "typing" | "recording" | "paused" }

export interface PresenceOperations {
  readonly set: (command: PresenceCommand) => Effect.Effect<void, EngineError>
  /** Asks to hear the contact's presence; it then comes as `PresenceUpdated` events. */
  readonly subscribe: (chatId: string) => Effect.Effect<void, EngineError>
}

/** Someone edited a message of the chat (the network allows it only to its writer). */
export interface InboundEdit {
  readonly chatId: string
  readonly from: string
  readonly targetEngineMessageId: string
  /** The new text, or the new caption of a media message. */
  readonly text: string
  readonly timestamp: Date
}

/** Someone deleted a message of the chat for everyone. */
export interface InboundRevoke {
  readonly chatId: string
  readonly from: string
  readonly targetEngineMessageId: string
  readonly timestamp: Date
}

/** A vote on a poll of the chat, decrypted: the voter's whole choice now (empty: withdrawn). */
export interface InboundPollVote {
  readonly chatId: string
  readonly voter: string
  readonly targetEngineMessageId: string
  readonly options: ReadonlyArray<string>
  readonly timestamp: Date
}

/** Someone pinned (or unpinned) a message in the chat. */
export interface InboundPin {
  readonly chatId: string
  readonly from: string
  readonly targetEngineMessageId: string
  readonly pinned: boolean
  readonly timestamp: Date
}

/** What a contact's presence is now. */
export interface InboundPresence {
  readonly chatId: string
  readonly state: PresenceState
  /** When they were last online, if the network says (and their privacy settings allow). */
  readonly lastSeen: Date | null
}
