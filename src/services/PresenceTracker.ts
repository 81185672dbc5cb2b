import { Context, Effect, Layer, Option } from "effect"
import { type EngineCallError, type EngineTimeout, NotFound, type StoreUnavailable } from "../domain/Errors.js"
import type { Presence, SetPresenceRequest } from "../domain/Message.js"
import { engineCall } from "../runtime/EngineCall.js"
import { PresenceRepo } from "../runtime/ports/store/PresenceRepo.js"
import { SessionRepo } from "../runtime/ports/store/SessionRepo.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { existingSession } from "./sessionLookup.js"

/** The account's own presence, and what it hears of its contacts'. */
export interface PresenceService {
  /** Online/offline everywhere, or typing/recording/paused in one chat. */
  readonly set: (sessionId: string, request: SetPresenceRequest) => Effect.Effect<SetPresenceRequest, EngineCallError | EngineTimeout | StoreUnavailable>
  /** Asks to hear a contact's presence: it then comes as `presence.update` events, and `get` answers. */
  readonly subscribe: (sessionId: string, chatId: string) => Effect.Effect<
    { readonly chatId: string; readonly subscribed: true },
    EngineCallError | EngineTimeout | StoreUnavailable>
  /** The last presence heard of the contact. */
  readonly get: (sessionId: string, chatId: string) => Effect.Effect<Presence, NotFound | StoreUnavailable>
}

export class PresenceTracker extends Context.Tag("switchboard/PresenceTracker")<PresenceTracker, PresenceService>() {
  static readonly layer = Layer.effect(PresenceTracker, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const sessions = yield* SessionRepo
  const presence = yield* PresenceRepo
  const supervisor = yield* SessionSupervisor

  const service: PresenceService = {
    set: Effect.fn("PresenceTracker.set")(function*(sessionId, request) {
      yield* supervisor.useConnection(sessionId, engineCall("PresenceSet", { command: request }))
      return request
    }),
    subscribe: Effect.fn("PresenceTracker.subscribe")(function*(sessionId, chatId) {
      yield* supervisor.useConnection(sessionId, engineCall("PresenceSubscribe", { chatId }))
      return { chatId, subscribed: true as const }
    }),
    get: Effect.fn("PresenceTracker.get")(function*(sessionId, chatId) {
      yield* existingSession(sessions, sessionId)
      return yield* Effect.flatMap(presence.find(sessionId, chatId), Option.match({
        onNone: () => Effect.fail(new NotFound({
          code: "PRESENCE_UNKNOWN",
          message: `nothing has been heard of ${chatId}'s presence yet; subscribe first (POST …/presence/subscribe)`
        })),
        onSome: Effect.succeed
      }))
    })
  }
  return service
})
