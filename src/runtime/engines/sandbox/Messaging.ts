import { Clock, Effect, HashMap, Option, Ref } from "effect"
import { phoneOfChatId } from "../../../services/Ids.js"
import { EngineError, EngineEvent, type InboundMedia, type InboundMessage, type ReactCommand, type SendCommand } from "../../Engine.js"
import { isEchoPhone, newSandboxMessageId } from "./identity.js"
import type { SentMessage } from "./Ledger.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Sending and reading on the sandbox network, built on the switchboard's routing. Like the
 * switchboard's own operations these run under its lock; the caller takes it.
 */

/** What a message carries to its recipients: media was uploaded before the lock was taken. */
export type Payload =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "media"; readonly kind: InboundMessage["type"]; readonly caption: string | null; readonly media: InboundMedia }

export const messagingOf = (switchboard: Switchboard) => {
  const { acknowledge, handTo, phoneOwners, recordSent, requireReady, schedule, sentMessages } = switchboard

  /** Only person chats are simulated; the recipient's phone, or why not. */
  const personPhone = (chatId: string) => {
    const phone = phoneOfChatId(chatId)
    return phone === null
      ? Effect.fail(new EngineError({
        code: "UNSUPPORTED_CHAT",
        message: `sandbox: only person chats (<digits>@c.us) are simulated, not ${chatId}`,
        transient: false
      }))
      : Effect.succeed(phone)
  }

  const send = (line: Line, { chatId, engineMessageId }: SendCommand, payload: Payload) =>
    Effect.gen(function*() {
      yield* requireReady(line)
      const earlier = HashMap.get(yield* Ref.get(sentMessages), engineMessageId)
      if (Option.isSome(earlier)) return yield* resend(line, engineMessageId, earlier.value)
      const recipientPhone = yield* personPhone(chatId)
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      const senderPhone = line.me.phone
      const sent: SentMessage = { senderSessionId: line.sessionId, senderPhone, recipientPhone, timestamp, status: "pending" }
      yield* recordSent(engineMessageId, sent)
      yield* acknowledge(engineMessageId, "sent")
      const owner = HashMap.get(yield* Ref.get(phoneOwners), recipientPhone)
      const from = `${senderPhone}@c.us`
      if (Option.isSome(owner)) {
        yield* handTo(owner.value, received(engineMessageId, from, line.me.lid, payload, timestamp))
      } else if (isEchoPhone(recipientPhone)) {
        yield* acknowledge(engineMessageId, "delivered")
        yield* acknowledge(engineMessageId, "read")
        // An echo contact listens to voice notes, as WhatsApp reports with a `played` receipt.
        if (payload.type === "media" && payload.media.ptt) yield* acknowledge(engineMessageId, "played")
        yield* schedule(echoReply(line.sessionId, recipientPhone, payload))
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

  /** An echo contact answers with what it got: the same text, or the same media. */
  const echoReply = (sessionId: string, echoPhone: string, payload: Payload) =>
    Effect.gen(function*() {
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      yield* handTo(sessionId, received(newSandboxMessageId(), `${echoPhone}@c.us`, null, payload, timestamp))
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

  /**
   * A reaction travels like a message to the other person of the chat, who sees it on the same
   * message id (sandbox ids are the same on both sides). Echo contacts ignore reactions.
   */
  const react = (line: Line, { chatId, emoji, target }: ReactCommand) =>
    Effect.gen(function*() {
      yield* requireReady(line)
      const otherPhone = yield* personPhone(chatId)
      const owner = HashMap.get(yield* Ref.get(phoneOwners), otherPhone)
      if (Option.isNone(owner)) return
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      const from = `${line.me.phone}@c.us`
      yield* handTo(owner.value, EngineEvent.ReactionReceived({
        reaction: { chatId: from, from, targetEngineMessageId: target.engineMessageId, emoji, timestamp }
      }))
    })

  return { send, markRead, react }
}

const received = (engineMessageId: string, from: string, fromLid: string | null, payload: Payload, timestamp: Date) =>
  EngineEvent.MessageReceived({
    message: {
      engineMessageId,
      chatId: from,
      from,
      fromPhone: from,
      fromLid,
      timestamp,
      ...(payload.type === "text"
        ? { type: "text", text: payload.text }
        : { type: payload.kind, text: null, caption: payload.caption, media: payload.media })
    }
  })
