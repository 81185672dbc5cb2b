import { Effect } from "effect"
import { EngineError } from "../Engine.js"
import type { ChannelOperations, ContactOperations, GroupOperations, LabelOperations } from "../EngineDirectory.js"

/** An operation this engine does not offer: the API answers 501 NOT_SUPPORTED. */
export const notSupported = (engine: string, what: string) =>
  Effect.fail(new EngineError({ code: "NOT_SUPPORTED", message: `${engine}: ${what} is not supported`, transient: false, refusal: "not_supported" }))

/** The directory operations of an engine that has none of them (yet). */
export const noDirectory = (engine: string): {
  readonly groups: GroupOperations
  readonly channels: ChannelOperations
  readonly labels: LabelOperations
  readonly contacts: ContactOperations
} => {
  const no = (what: string) => () => notSupported(engine, what)
  return {
    groups: {
      create: no("groups"),
      get: no("groups"),
      list: notSupported(engine, "groups"),
      updateParticipants: no("groups"),
      setSubject: no("groups"),
      setDescription: no("groups"),
      leave: no("groups"),
      inviteCode: no("groups"),
      revokeInvite: no("groups"),
      join: no("groups")
    },
    channels: {
      create: no("channels"),
      get: no("channels"),
      delete: no("channels"),
      subscribe: no("channels"),
      unsubscribe: no("channels"),
      messages: no("channels")
    },
    labels: { create: no("labels"), addToChat: no("labels"), removeFromChat: no("labels") },
    contacts: { check: no("contact checks") }
  }
}
