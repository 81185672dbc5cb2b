import type { Effect } from "effect"
import type { Channel, ChannelMessage } from "../domain/Channel.js"
import type { ContactCheck } from "../domain/Contact.js"
import type { GroupUpdate } from "../domain/Events.js"
import type { Group, ParticipantAction, ParticipantResult } from "../domain/Group.js"
import type { Label } from "../domain/Label.js"
import type { EngineError } from "./Engine.js"

/**
 * What a connection can do beyond messages: groups, channels (newsletters), labels (WhatsApp
 * Business) and contact lookups. Ids cross in the API's form (`…@g.us`, `…@newsletter`,
 * `…@c.us`/`…@lid`); engines translate inside. An engine refuses with an `EngineError` whose
 * `refusal` says how the API should answer (see `EngineRefusal`).
 */

export interface GroupOperations {
  readonly create: (subject: string, participants: ReadonlyArray<string>) => Effect.Effect<Group, EngineError>
  readonly get: (groupId: string) => Effect.Effect<Group, EngineError>
  /** Every group the account is in. */
  readonly list: Effect.Effect<ReadonlyArray<Group>, EngineError>
  readonly updateParticipants: (
    groupId: string,
    participants: ReadonlyArray<string>,
    action: ParticipantAction
  ) => Effect.Effect<ReadonlyArray<ParticipantResult>, EngineError>
  readonly setSubject: (groupId: string, subject: string) => Effect.Effect<void, EngineError>
  /** "" clears it. */
  readonly setDescription: (groupId: string, description: string) => Effect.Effect<void, EngineError>
  readonly leave: (groupId: string) => Effect.Effect<void, EngineError>
  readonly inviteCode: (groupId: string) => Effect.Effect<string, EngineError>
  /** Invalidates the current code; the new one. */
  readonly revokeInvite: (groupId: string) => Effect.Effect<string, EngineError>
  /** Joins by invite code; the group's id. */
  readonly join: (code: string) => Effect.Effect<string, EngineError>
}

export interface ChannelOperations {
  readonly create: (name: string, description: string | null) => Effect.Effect<Channel, EngineError>
  readonly get: (channelId: string) => Effect.Effect<Channel, EngineError>
  /** Deletes a channel this session owns. */
  readonly delete: (channelId: string) => Effect.Effect<void, EngineError>
  readonly subscribe: (target: { readonly channelId: string } | { readonly inviteCode: string }) => Effect.Effect<Channel, EngineError>
  readonly unsubscribe: (channelId: string) => Effect.Effect<void, EngineError>
  /** The newest messages, newest first. */
  readonly messages: (channelId: string, count: number) => Effect.Effect<ReadonlyArray<ChannelMessage>, EngineError>
}

/** Labels exist on WhatsApp Business accounts only; others are refused with `conflict`. */
export interface LabelOperations {
  readonly create: (name: string, color: number | null) => Effect.Effect<Label, EngineError>
  readonly addToChat: (chatId: string, labelId: string) => Effect.Effect<void, EngineError>
  readonly removeFromChat: (chatId: string, labelId: string) => Effect.Effect<void, EngineError>
}

export interface ContactOperations {
  /** Whether each phone number (digits) is on WhatsApp, with its ids. */
  readonly check: (phones: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ContactCheck>, EngineError>
}

/** A change to a group the account is in, as the network reports it. */
export interface GroupChange {
  readonly kind: "join" | "leave" | "update" | "participants"
  readonly groupId: string
  /** The group as it is now, when the engine knows it whole. */
  readonly group?: Group | undefined
  /** `update`: the fields that changed. */
  readonly update?: GroupUpdate | undefined
  /** `participants`: who, and what happened to them. */
  readonly participants?: ReadonlyArray<string> | undefined
  readonly action?: ParticipantAction | undefined
  /** Who did it, when known. */
  readonly by?: string | null | undefined
}

export type LabelChange =
  | { readonly kind: "label"; readonly label: Label; readonly deleted: boolean }
  | { readonly kind: "association"; readonly chatId: string; readonly labelId: string; readonly added: boolean }

/** People the engine learnt about (from messages, the address book, LID mappings). */
export interface ContactSeen {
  readonly phone: string | null
  readonly lid: string | null
  readonly name: string | null
}
