import { Context, Effect, Layer, Option, ParseResult, Schema } from "effect"
import type { Call } from "../domain/Call.js"
import { type Conflict, type EngineCallError, NotFound, type StoreUnavailable, toApiError, ValidationFailed } from "../domain/Errors.js"
import { PersonIdFromInput } from "../domain/Ids.js"
import { CallSimulator, type SimulatedCaller } from "../runtime/ports/CallSimulator.js"
import { SessionRepo, type SessionRow } from "../runtime/ports/store/SessionRepo.js"
import { existingSession } from "./sessionLookup.js"

/**
 * Rings a session on the simulated network (`POST /api/sandbox/sessions/{id}/incoming-call`),
 * for testing a bot's handling of calls without a phone. Only the sandbox engine can: on any
 * other there is no `CallSimulator`, and the answer is 404 `NOT_SANDBOX`.
 */
export interface SandboxCallsService {
  readonly ring: (sessionId: string, request: { readonly from: string; readonly isVideo?: boolean | undefined }) => Effect.Effect<
    Call,
    NotFound | Conflict | ValidationFailed | EngineCallError | StoreUnavailable>
}

export class SandboxCalls extends Context.Tag("switchboard/SandboxCalls")<SandboxCalls, SandboxCallsService>() {
  static readonly layer = Layer.effect(SandboxCalls, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const simulator = yield* Effect.serviceOption(CallSimulator)
  const sessions = yield* SessionRepo

  const invalidCaller = (message: string) => new ValidationFailed({ code: "VALIDATION_FAILED", message })

  /**
   * Another session of this gateway (by id, then by name), else a person's phone number or id.
   * Only a person calls (no group or channel), and never the session itself.
   */
  const callerOf = (callee: SessionRow, from: string) =>
    Effect.gen(function*() {
      const byId = yield* sessions.findById(from)
      const named = Option.isSome(byId) ? byId : yield* sessions.findByName(from)
      if (Option.isSome(named)) {
        if (named.value.id === callee.id) return yield* invalidCaller("a session cannot ring itself")
        return { sessionId: named.value.id } satisfies SimulatedCaller
      }
      const chatId = yield* Schema.decodeUnknown(PersonIdFromInput)(from).pipe(
        Effect.mapError((error) =>
          invalidCaller(`from is no session, phone number or person's id: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
        )
      )
      if (callee.phone !== null && chatId === `${callee.phone}@c.us`) return yield* invalidCaller("a session cannot ring itself")
      return { chatId } satisfies SimulatedCaller
    })

  const service: SandboxCallsService = {
    ring: Effect.fn("SandboxCalls.ring")(function*(sessionId, request) {
      if (Option.isNone(simulator)) {
        return yield* new NotFound({ code: "NOT_SANDBOX", message: "calls can be simulated on the sandbox engine only" })
      }
      const callee = yield* existingSession(sessions, sessionId)
      const caller = yield* callerOf(callee, request.from)
      const isVideo = request.isVideo ?? false
      const rung = yield* simulator.value.ring(sessionId, caller, isVideo).pipe(Effect.mapError(toApiError))
      return { callId: rung.callId, from: rung.from, isVideo, isGroup: false, status: "offer", at: rung.at.toISOString() } satisfies Call
    })
  }
  return service
})
