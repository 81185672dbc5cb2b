import { Context, type Effect } from "effect"
import type { EngineError } from "../Engine.js"

/** Who rings: a phone number or chat id, or another session of the same simulated network. */
export type SimulatedCaller = { readonly chatId: string } | { readonly sessionId: string }

/**
 * Ringing a session on purpose, for testing bots without a phone: only an engine that simulates
 * the network (the sandbox) provides it; on any other the gateway has none, and the API's
 * `…/incoming-call` answers 404.
 */
export class CallSimulator extends Context.Tag("switchboard/CallSimulator")<CallSimulator, {
  readonly ring: (sessionId: string, caller: SimulatedCaller, isVideo: boolean) => Effect.Effect<
    { readonly callId: string; readonly from: string; readonly isVideo: boolean; readonly at: Date },
    EngineError>
}>() {}
