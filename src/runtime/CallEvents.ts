import { Clock, DateTime, Effect, Option } from "effect"
import { makeEvent } from "../domain/makeEvent.js"
import { settingsOrDefault } from "../domain/SessionSettings.js"
import type { InboundCall } from "./EngineAccount.js"
import { Events } from "./Events.js"
import type { InboundContext } from "./InboundEvents.js"
import { outboundRow } from "./OutboundRow.js"
import { CallRepo } from "./ports/store/CallRepo.js"
import { ContactRepo } from "./ports/store/ContactRepo.js"
import { MessageRepo } from "./ports/store/MessageRepo.js"
import { SessionRepo } from "./ports/store/SessionRepo.js"
import { Store } from "./ports/store/Store.js"

/**
 * A call offered or changed: into the call log and announced (`call.received` for a call new to
 * the log, `call.update` for a change), then, for a ringing call while the session's settings say
 * `rejectCalls`, rejected at once and the caller answered with `rejectCallMessage` (unless the
 * account blocked the caller: nobody writes to a blocked contact). A change to a call the log
 * never saw offered is no call of this session (as Baileys' own call log judges it): ignored.
 */
export const applyCall = (context: InboundContext, inbound: InboundCall) =>
  Effect.gen(function*() {
    const { sessionId } = context
    const calls = yield* CallRepo
    const events = yield* Events
    const call = { ...inbound, at: inbound.at.toISOString() }
    const recorded = yield* (yield* Store).transactionally(Effect.gen(function*() {
      if (inbound.status !== "offer" && Option.isNone(yield* calls.find(sessionId, inbound.callId))) return null
      const now = yield* DateTime.nowAsDate
      const recorded = yield* calls.record(sessionId, call, now.toISOString())
      if (recorded._tag === "New") yield* events.publish(makeEvent("call.received", sessionId, { call: recorded.call }, now))
      if (recorded._tag === "Changed") {
        yield* events.publish(makeEvent("call.update", sessionId, { callId: call.callId, status: recorded.call.status }, now))
      }
      return recorded
    }))
    if (recorded?._tag !== "New" || inbound.status !== "offer") return
    const session = yield* (yield* SessionRepo).findById(sessionId)
    const settings = settingsOrDefault(Option.getOrNull(session)?.settings ?? null)
    if (!settings.rejectCalls) return
    yield* rejectRinging(context, inbound)
    const hasAnswer = settings.rejectCallMessage !== null && settings.rejectCallMessage.trim() !== ""
    if (hasAnswer && !(yield* (yield* ContactRepo).isBlocked(sessionId, inbound.from))) {
      yield* answerCaller(context, Option.getOrNull(session)?.phone ?? null, inbound.from, settings.rejectCallMessage)
    }
  })

/**
 * Rejected on the network, then in the log: the engine's own report of the reject (if it sends
 * one) then finds the log already saying so and announces nothing twice.
 */
const rejectRinging = (context: InboundContext, call: InboundCall) =>
  Effect.gen(function*() {
    const rejected = yield* Effect.either(context.rejectCall(call.callId, call.from))
    if (rejected._tag === "Left") {
      return yield* Effect.logWarning("could not reject a call as the settings ask", rejected.left.code)
    }
    yield* markRejected(context.sessionId, call.callId)
  })

/** The log says `reject` and `call.update` tells so; used by the API's reject as by `rejectCalls`. */
export const markRejected = (sessionId: string, callId: string) =>
  Effect.gen(function*() {
    const calls = yield* CallRepo
    const events = yield* Events
    return yield* (yield* Store).transactionally(Effect.gen(function*() {
      const now = yield* DateTime.nowAsDate
      const changed = yield* calls.setStatus(sessionId, callId, "reject", now.toISOString())
      if (Option.isSome(changed)) yield* events.publish(makeEvent("call.update", sessionId, { callId, status: "reject" }, now))
      return changed
    }))
  })

/**
 * The text goes out like any send: stored `pending`, then through the session's outbound lane,
 * so it waits for the connection, keeps the pacing and survives a restart.
 */
const answerCaller = (context: InboundContext, phone: string | null, caller: string, text: string) =>
  Effect.gen(function*() {
    const row = outboundRow({
      session: { id: context.sessionId, phone },
      chatId: caller,
      content: { type: "text", text, caption: null, media: null },
      engineMessageId: context.newMessageId(),
      sendOptions: null,
      millis: yield* Clock.currentTimeMillis
    })
    yield* (yield* MessageRepo).insert(row)
    yield* context.queueSend(row)
  })
