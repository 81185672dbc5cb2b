import { existingSession } from "./sessionLookup.js"
import { Effect } from "effect"
import { SessionRepo } from "../runtime/ports/store/SessionRepo.js"
import type { EngineCall, EngineOperation } from "../runtime/EngineCall.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"

/**
 * How the directory services reach a session: `call` runs an engine operation on its ready
 * connection (404 for an unknown session, 409 SESSION_NOT_READY when it is not ready, the
 * engine's refusals as their statuses); `isReady` tells whether the network can be asked at all
 * or the Store's copy must do.
 */
export const makeSessionCalls = Effect.gen(function*() {
  const sessions = yield* SessionRepo
  const supervisor = yield* SessionSupervisor
  return {
    call: <Op extends EngineOperation>(sessionId: string, call: EngineCall<Op>) =>
      Effect.zipRight(existingSession(sessions, sessionId), supervisor.useConnection(sessionId, call)),
    isReady: (sessionId: string) =>
      Effect.zipRight(
        existingSession(sessions, sessionId),
        Effect.map(supervisor.state(sessionId), (state) => state._tag === "Some" && state.value.status === "ready")
      ),
    exists: (sessionId: string) => Effect.asVoid(existingSession(sessions, sessionId))
  }
})
