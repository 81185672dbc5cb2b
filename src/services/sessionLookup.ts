import { Effect, Option } from "effect"
import { sessionNotFound } from "../domain/Errors.js"
import type { SessionRepo } from "../runtime/ports/store/SessionRepo.js"

/** The session, or 404 `SESSION_NOT_FOUND`: what every call on a session starts with. */
export const existingSession = (sessions: SessionRepo["Type"], sessionId: string) =>
  Effect.flatMap(sessions.findById(sessionId), Option.match({
    onNone: () => Effect.fail(sessionNotFound(sessionId)),
    onSome: Effect.succeed
  }))
