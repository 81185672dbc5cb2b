import { Context, type Effect, type Option } from "effect"
import type { Call, CallStatus } from "../../../domain/Call.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

/** What recording a call did: a call new to the log, a change of a known one, or nothing new. */
export type CallRecorded =
  | { readonly _tag: "New"; readonly call: Call }
  | { readonly _tag: "Changed"; readonly call: Call }
  | { readonly _tag: "Unchanged"; readonly call: Call }

/** Each session's call log: one row per call, its status following what the network reports. */
export class CallRepo extends Context.Tag("switchboard/CallRepo")<CallRepo, {
  /** A call offered, or what became of it (the runtime records changes only of calls it saw offered). */
  readonly record: (sessionId: string, call: Call, at: string) => Effect.Effect<CallRecorded, StoreUnavailable>
  /** The call as changed; none when the log does not know it or it already had that status. */
  readonly setStatus: (sessionId: string, callId: string, status: CallStatus, at: string) => Effect.Effect<Option.Option<Call>, StoreUnavailable>
  readonly find: (sessionId: string, callId: string) => Effect.Effect<Option.Option<Call>, StoreUnavailable>
  /** Newest first. */
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Call>, StoreUnavailable>
}>() {}
