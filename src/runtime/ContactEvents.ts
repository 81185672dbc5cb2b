import { Effect } from "effect"
import type { InboundContactChange, InboundJoinRequest } from "./EngineAccount.js"

// TEMPORARY (issue 18 groundwork): the contacts' slice fills these in.

/** People changed (push name, about, picture, blocked): kept, and announced as `contact.update`. */
export const applyContactChanges = (_sessionId: string, _changes: ReadonlyArray<InboundContactChange>) => Effect.void

/** Someone asked to join a group the account administers (or was answered): `group.request`. */
export const applyJoinRequest = (_sessionId: string, _request: InboundJoinRequest) => Effect.void
