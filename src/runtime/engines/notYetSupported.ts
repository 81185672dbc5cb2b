import { Effect } from "effect"
import { EngineError } from "../Engine.js"
import type { MessageActionOperations, PresenceOperations } from "../EngineMessageActions.js"

// TEMPORARY (issue 17 in progress): replaced by each engine's implementation before the issue lands.
const refuse = (what: string) =>
  Effect.fail(new EngineError({ code: "NOT_SUPPORTED", message: `${what} is not supported yet`, transient: false, refusal: "not_supported" }))

export const notYetMessages: MessageActionOperations = {
  edit: () => refuse("editing"),
  revoke: () => refuse("revoking"),
  star: () => refuse("starring"),
  pin: () => refuse("pinning"),
  votePoll: () => refuse("voting")
}

export const notYetPresence: PresenceOperations = {
  set: () => refuse("presence"),
  subscribe: () => refuse("presence")
}
