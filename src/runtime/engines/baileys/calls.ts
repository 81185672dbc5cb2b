import type { WACallEvent, WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { CallStatus } from "../../../domain/Call.js"
import { EngineEvent } from "../../Engine.js"
import type { CallOperations, InboundCall } from "../../EngineAccount.js"
import { iqFailureOf } from "./disconnect.js"
import { noPhoneLookup, type PhoneOfLid, personIdOf, toWireJid } from "./jids.js"
import { refusal } from "./messageActions.js"

/**
 * Calls through Baileys. WhatsApp Web cannot take a call, only see it ring and reject it:
 * `<call><offer>` → `call` event "offer"; the account's phone answering or declining →
 * "accept" / "reject"; nobody answering → `<terminate reason=timeout>` ("timeout"); the caller
 * hanging up → a plain terminate, which before anyone answered is a missed call and after an
 * accept just the end of it (nothing new to report).
 */

interface Ringing {
  readonly call: InboundCall
  /** The caller as the offer named them (`call-creator`): a reject must name them the same way. */
  readonly creatorJid: string
  state: "ringing" | "answered" | "ended"
}

/** The calls of one connection: what rang, so later stanzas of a call can be told apart. */
export class CallLog {
  private readonly calls = new Map<string, Ringing>()

  /** A `call` event → the call as the gateway reports it, or null when there is nothing new. */
  translate(event: WACallEvent, phoneOfLid: PhoneOfLid = noPhoneLookup) {
    return Effect.gen(this, function*() {
      const known = this.calls.get(event.id)
      if (event.status === "offer") {
        const from = yield* personIdOf(event.from, event.callerPn, phoneOfLid)
        if (from === null) return []
        const call: InboundCall = {
          callId: event.id,
          from,
          isVideo: event.isVideo === true,
          isGroup: event.isGroup === true,
          status: "offer",
          at: event.date
        }
        this.calls.set(event.id, { call, creatorJid: event.from, state: "ringing" })
        return [EngineEvent.CallChanged({ call })]
      }
      if (known === undefined || known.state === "ended") return []
      const status = endingOf(event.status, known.state)
      if (status === undefined) return [] // ringing on: preaccept, transport, relay latency
      known.state = status === "accept" ? "answered" : "ended"
      return status === null ? [] : [EngineEvent.CallChanged({ call: { ...known.call, status } })]
    })
  }

  /** The JID to name the caller by in a reject: the offer's own, else the API id on the wire. */
  creatorOf(callId: string, from: string): string {
    return this.calls.get(callId)?.creatorJid ?? toWireJid(from)
  }

  /** Whether a call this connection saw ring is over or answered (one it never saw may still ring). */
  hasStopped(callId: string): boolean {
    const known = this.calls.get(callId)
    return known !== undefined && known.state !== "ringing"
  }

  /** The gateway rejected it: what the server says of it afterwards is no news. */
  rejected(callId: string): void {
    const known = this.calls.get(callId)
    if (known !== undefined) known.state = "ended"
  }
}

/**
 * What a later stanza of a call makes of it: a status to report, null when it ends without news
 * (a hang-up after an accept), undefined when the call goes on as it was.
 */
const endingOf = (status: WACallEvent["status"], state: "ringing" | "answered"): CallStatus | null | undefined => {
  switch (status) {
    case "accept":
    case "reject":
    case "timeout":
      return status
    case "terminate":
      return state === "answered" ? null : "missed"
    default:
      return undefined
  }
}

export type CallSocket = Pick<WASocket, "rejectCall">

export const makeCallOperations = (sock: CallSocket, log: CallLog): CallOperations => ({
  reject: (callId, from) =>
    log.hasStopped(callId)
      ? Effect.fail(refusal("CALL_NOT_RINGING", "the call is no longer ringing", "conflict"))
      : Effect.tryPromise({
        try: () => sock.rejectCall(callId, log.creatorOf(callId, from)),
        catch: (error) => iqFailureOf("CALL_REJECT", error)
      }).pipe(Effect.tap(() => log.rejected(callId)))
})
