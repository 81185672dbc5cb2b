import { Context, Effect, Layer, Option } from "effect"
import type { Call } from "../domain/Call.js"
import { Conflict, type EngineCallError, type EngineTimeout, NotFound, type StoreUnavailable } from "../domain/Errors.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { markRejected } from "../runtime/CallEvents.js"
import { engineCall } from "../runtime/EngineCall.js"
import { Events } from "../runtime/Events.js"
import { CallRepo } from "../runtime/ports/store/CallRepo.js"
import { Store } from "../runtime/ports/store/Store.js"
import { makeSessionCalls } from "./SessionCalls.js"

/** The call log of a session (`…/calls`), and rejecting a call while it rings. */
export interface CallsService {
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Call>, NotFound | StoreUnavailable>
  /** 404 `CALL_NOT_FOUND` for a call the log does not know, 409 `CALL_NOT_RINGING` once it was answered, rejected or over. */
  readonly reject: (sessionId: string, callId: string) => Effect.Effect<Call, NotFound | Conflict | EngineCallError | EngineTimeout | StoreUnavailable>
}

export class Calls extends Context.Tag("switchboard/Calls")<Calls, CallsService>() {
  static readonly layer = Layer.effect(Calls, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const repo = yield* CallRepo
  const { call, exists } = yield* makeSessionCalls
  /** What `markRejected` writes through (the log and its event, in one transaction). */
  const logContext = yield* Effect.context<CallRepo | Events | Store>()

  const service: CallsService = {
    list: Effect.fn("Calls.list")((sessionId, page) => Effect.zipRight(exists(sessionId), repo.list(sessionId, page))),
    reject: Effect.fn("Calls.reject")(function*(sessionId, callId) {
      yield* exists(sessionId)
      const known = yield* repo.find(sessionId, callId)
      if (Option.isNone(known)) return yield* new NotFound({ code: "CALL_NOT_FOUND", message: `no call ${callId} in this session's call log` })
      if (known.value.status !== "offer") return yield* notRinging(known.value)
      yield* call(sessionId, engineCall("CallsReject", { callId, from: known.value.from }))
      const rejected = yield* Effect.provide(markRejected(sessionId, callId), logContext)
      return Option.getOrElse(rejected, () => ({ ...known.value, status: "reject" as const }))
    })
  }
  return service
})

const notRinging = (call: Call) =>
  new Conflict({ code: "CALL_NOT_RINGING", message: `call ${call.callId} is no longer ringing (its status is ${call.status})` })
