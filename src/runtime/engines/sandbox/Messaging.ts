import { Clock, Effect, HashMap, Option, Ref } from "effect"
import { phoneOfChatId } from "../../../services/Ids.js"
import { EngineError, EngineEvent, type SendTextCommand } from "../../Engine.js"
import { isEchoPhone, newSandboxMessageId } from "./identity.js"
import type { SentMessage } from "./Ledger.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Sending and reading on the sandbox network, built on the switchboard's routing. Like the
 * switchboard's own operations these run under its lock; the caller takes it.
 */
export const messagingOf = (switchboard: Switchboard) => {
  const { acknowledge, handTo, phoneOwners, recordSent, requireReady, schedule, sentMessages } = switchboard

  const sendText = (line: Line, { chatId, engineMessageId, text }: SendTextCommand) =>
    Effect.gen(function*() {
      yield* requireReady(line)
      const earlier = HashMap.get(yield* Ref.get(sentMessages), engineMessageId)
      if (Option.isSome(earlier)) return yield* resend(line, engineMessageId, earlier.value)
      const recipientPhone = phoneOfChatId(chatId)
      if (recipientPhone === null) {
        return yield* new EngineError({
          code: "UNSUPPORTED_CHAT",
          message: `sandbox: only person chats (<digits>@c.us) are simulated, not ${chatId}`,
          transient: false
        })
      }
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      const senderPhone = line.me.phone
      const sent: SentMessage = { senderSessionId: line.sessionId, senderPhone, recipientPhone, timestamp, status: "pending" }
      yield* recordSent(engineMessageId, sent)
      yield* acknowledge(engineMessageId, "sent")
      const owner = HashMap.get(yield* Ref.get(phoneOwners), recipientPhone)
      if (Option.isSome(owner)) {
        const from = `${senderPhone}@c.us`
        yield* handTo(owner.value, EngineEvent.MessageReceived({
          message: { engineMessageId, chatId: from, from, fromPhone: from, fromLid: line.me.lid, type: "text", text, timestamp }
        }))
      } else if (isEchoPhone(recipientPhone)) {
        yield* acknowledge(engineMessageId, "delivered")
        yield* acknowledge(engineMessageId, "read")
        yield* schedule(echoReply(line.sessionId, recipientPhone, text))
      }
      // Anyone else is nobody on this network: the message stays at `sent`, as for a phone that is off.
      return { engineMessageId, timestamp }
    })

  /**
   * The gateway sends an id again after a crash: nothing is delivered a second time, and the
   * sender hears the status the message has reached, which it may have missed.
   */
  const resend = (line: Line, engineMessageId: string, earlier: SentMessage) =>
    Effect.gen(function*() {
      if (earlier.senderSessionId !== line.sessionId) {
        return yield* new EngineError({
          code: "DUPLICATE_MESSAGE_ID",
          message: `sandbox: message id ${engineMessageId} was already used by another session`,
          transient: false
        })
      }
      yield* schedule(repeatStatus(engineMessageId))
      return { engineMessageId, timestamp: earlier.timestamp }
    })

  const repeatStatus = (engineMessageId: string) =>
    Ref.get(sentMessages).pipe(Effect.flatMap((sent) =>
      Option.match(Option.filter(HashMap.get(sent, engineMessageId), (message) => message.status !== "pending"), {
        onNone: () => Effect.void,
        onSome: ({ senderSessionId, status }) =>
          handTo(senderSessionId, EngineEvent.MessageStatusChanged({ engineMessageId, status }))
      })
    ))

  const echoReply = (sessionId: string, echoPhone: string, text: string) =>
    Effect.gen(function*() {
      const engineMessageId = newSandboxMessageId()
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      const from = `${echoPhone}@c.us`
      yield* handTo(sessionId, EngineEvent.MessageReceived({
        message: { engineMessageId, chatId: from, from, fromPhone: from, fromLid: null, type: "text", text, timestamp }
      }))
    })

  /** Read receipts go only for messages this session received from that chat. */
  const markRead = (line: Line, chatId: string, engineMessageIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* requireReady(line)
      const senderPhone = phoneOfChatId(chatId)
      const sent = yield* Ref.get(sentMessages)
      yield* Effect.forEach(engineMessageIds, (engineMessageId) =>
        Option.match(HashMap.get(sent, engineMessageId), {
          onNone: () => Effect.void,
          onSome: (message) =>
            message.recipientPhone === line.me.phone && message.senderPhone === senderPhone
              ? acknowledge(engineMessageId, "read")
              : Effect.void
        }), { discard: true })
    })


  return { sendText, markRead }
}
