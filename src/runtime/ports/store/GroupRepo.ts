import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Group, ParticipantAction } from "../../../domain/Group.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"



/** The groups each session is in, with their participants: the gateway's copy of the network's. */
export class GroupRepo extends Context.Tag("switchboard/GroupRepo")<GroupRepo, {
  readonly upsert: (sessionId: string, group: Group) => Effect.Effect<void, StoreUnavailable>
  readonly update: (sessionId: string, groupId: string, fields: Partial<Pick<Group, "subject" | "description" | "announce" | "restrict" | "memberAddMode" | "approval">>) => Effect.Effect<void, StoreUnavailable>
  readonly changeParticipants: (sessionId: string, groupId: string, participants: readonly string[], action: ParticipantAction) => Effect.Effect<void, StoreUnavailable>
  readonly remove: (sessionId: string, groupId: string) => Effect.Effect<void, StoreUnavailable>
  readonly find: (sessionId: string, groupId: string) => Effect.Effect<Option.Option<Group>, StoreUnavailable>
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Group>, StoreUnavailable>
}>() {}
