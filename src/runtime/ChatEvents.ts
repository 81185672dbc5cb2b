import { Effect } from "effect"
import type { HistoryBatch, InboundChatChange } from "./EngineAccount.js"
import type { InboundContext } from "./InboundEvents.js"

// TEMPORARY (issue 18 groundwork): the chat list's slice fills these in.

/** Chats changed on another device: the chat list follows, and `chat.update` announces it. */
export const applyChatChanges = (_sessionId: string, _changes: ReadonlyArray<InboundChatChange>) => Effect.void

/** One batch of history: stored with `source: "history"`, announced once as `session.history`. */
export const importHistory = (_context: InboundContext, _batch: HistoryBatch) => Effect.void
