import { randomBytes } from "node:crypto"
import { Clock, type Duration, Effect, HashMap, Option, Ref } from "effect"
import type { CallStatus } from "../../../domain/Call.js"
import { EngineEvent } from "../../Engine.js"
import type { CallOperations } from "../../EngineAccount.js"
import type { SimulatedCaller } from "../../ports/CallSimulator.js"
import { refuse } from "./Directory.js"
import { sandboxPhoneOf } from "./identity.js"
import type { Blocks } from "./Messaging.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Calls on the sandbox network. Nobody talks: a call rings a session (`CallChanged` offer) until
 * it rejects it or `timeout` passes. The caller is a phone (nobody here) or another sandbox
 * session; only the callee's call log has the call (a caller's engine tells it nothing of a call
 * it placed), and a session that blocked the caller is not rung at all, as on WhatsApp.
 * Like presence, a call is news only while it rings: it is offered to a session that is ready,
 * never held for one that is away. Runs under the network's lock (the operations take it).
 */

interface RingingCall {
  readonly callId: string
  readonly calleeSessionId: string
  /** The caller as the callee sees it. */
  readonly from: string
  readonly isVideo: boolean
  readonly at: Date
  readonly status: CallStatus
}

/** WhatsApp's call ids are 32 uppercase hex digits. */
const newCallId = () => randomBytes(16).toString("hex").toUpperCase()

export const makeCalls = (switchboard: Switchboard, blocks: Blocks, timeout: Duration.Duration) =>
  Effect.gen(function*() {
    const { liveLine, offerIfReady, requireReady, serialized } = switchboard
    const calls = yield* Ref.make(HashMap.empty<string, RingingCall>())
    const scope = yield* Effect.scope

    const changed = (call: RingingCall, status: CallStatus, from: string) =>
      EngineEvent.CallChanged({ call: { callId: call.callId, from, isVideo: call.isVideo, isGroup: false, status, at: call.at } })

    /** A ringing call ends; one already over stays as it ended. */
    const end = (callId: string, status: "reject" | "timeout") =>
      Effect.gen(function*() {
        const call = HashMap.get(yield* Ref.get(calls), callId)
        if (Option.isNone(call) || call.value.status !== "offer") return
        yield* Ref.update(calls, HashMap.set<string, RingingCall>(callId, { ...call.value, status }))
        yield* offerIfReady(call.value.calleeSessionId, changed(call.value, status, call.value.from))
      })

    /** Rings a ready session (unless it blocked the caller); the call times out by itself unless rejected first. */
    const ring = (calleeSessionId: string, caller: SimulatedCaller, isVideo: boolean) =>
      serialized(Effect.gen(function*() {
        const callee = yield* liveLine(calleeSessionId)
        if (Option.isNone(callee) || !callee.value.ready) {
          return yield* refuse("conflict", "SESSION_NOT_READY", "only a ready session can be rung")
        }
        const call: RingingCall = {
          callId: newCallId(),
          calleeSessionId,
          from: "sessionId" in caller ? `${sandboxPhoneOf(caller.sessionId)}@c.us` : caller.chatId,
          isVideo,
          at: new Date(yield* Clock.currentTimeMillis),
          status: "offer"
        }
        // The caller's side rings on; the callee never hears of it.
        if (yield* blocks(calleeSessionId, call.from)) return { callId: call.callId, from: call.from, isVideo, at: call.at }
        yield* Ref.update(calls, HashMap.set(call.callId, call))
        yield* offerIfReady(calleeSessionId, changed(call, "offer", call.from))
        yield* Effect.forkIn(Effect.zipRight(Effect.sleep(timeout), serialized(end(call.callId, "timeout"))), scope)
        return { callId: call.callId, from: call.from, isVideo, at: call.at }
      }))

    const operations = (line: Line): CallOperations => ({
      reject: (callId) =>
        serialized(Effect.gen(function*() {
          yield* requireReady(line)
          const call = Option.filter(HashMap.get(yield* Ref.get(calls), callId), (call) => call.calleeSessionId === line.sessionId)
          if (Option.isNone(call)) return yield* refuse("not_found", "CALL_NOT_FOUND", `no call ${callId} rang this session`)
          if (call.value.status !== "offer") {
            return yield* refuse("conflict", "CALL_NOT_RINGING", `call ${callId} is no longer ringing (${call.value.status})`)
          }
          yield* end(callId, "reject")
        }))
    })

    return { ring, operations }
  })

export type SandboxCalls = Effect.Effect.Success<ReturnType<typeof makeCalls>>
