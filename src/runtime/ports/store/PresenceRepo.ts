import { Context, type Effect, type Option } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Presence } from "../../../domain/Message.js"

/** The last presence heard of each contact, per session (one row each, replaced in place). */
export class PresenceRepo extends Context.Tag("switchboard/PresenceRepo")<PresenceRepo, {
  readonly record: (sessionId: string, presence: Presence) => Effect.Effect<void, StoreUnavailable>
  readonly find: (sessionId: string, chatId: string) => Effect.Effect<Option.Option<Presence>, StoreUnavailable>
}>() {}
