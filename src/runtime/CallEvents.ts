import { Effect } from "effect"
import type { InboundCall } from "./EngineAccount.js"
import type { InboundContext } from "./InboundEvents.js"

// TEMPORARY (issue 18 groundwork): the calls' slice fills this in.

/** A call offered or changed: into the call log, announced, and rejected at once when the settings say. */
export const applyCall = (_context: InboundContext, _call: InboundCall) => Effect.void
