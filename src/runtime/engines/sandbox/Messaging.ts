import { Clock, Effect, HashMap, Option, Ref } from "effect"
import { phoneOfChatId } from "../../../domain/Ids.js"
import { EngineError, EngineEvent, type InboundMedia, type InboundMessage, type ReactCommand, type SendCommand } from "../../Engine.js"
import { isEchoPhone, newSandboxMessageId } from "./identity.js"
import type { SentMessage } from "./Ledger.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Where messages to a group or a channel go: each checks that the sender may, records the
 * message and fans it out (see `Groups.ts`, `Channels.ts`).
 */
export interface Broadcasts {
  readonly toGroup: (line: Line, engineMessageId: string, groupId: string, payload: Payload, timestamp: Date) => Effect.Effect<void, EngineError>
  readonly toChannel: (line: Line, engineMessageId: string, channelId: string, payload: Payload, timestamp: Date) => Effect.Effect<void, EngineError>
  readonly reactInGroup: (line: Line, command: ReactCommand, timestamp: Date) => Effect.Effect<void, EngineError>
}

/**
 * Sending and reading on the sandbox network, built on the switchboard's routing. Like the
 * switchboard's own operations these run under its lock; the caller takes it.
 */

/** What a message carries to its recipients: media was uploaded before the lock was taken. */
export type Payload =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "media"; readonly kind: InboundMessage["type"]; readonly caption: string | null; readonly media: InboundMedia }

export const messagingOf = (switchboard: Switchboard, broadcasts: Broadcasts) => {
  const { acknowledge, handTo, phoneOwners, receipt, recordSent, requireReady, schedule, sentMessages } = switchboard

  /** Person chats by phone, groups and channels are simulated; the recipient's phone, or why not. */
  const personPhone = (chatId: string) => {
    const phone = phoneOfChatId(chatId)
    return phone === null
      ? Effect.fail(new EngineError({
        code: "UNSUPPORTED_CHAT",
        message: `sandbox: only person chats (<digits>@c.us), groups and channels are simulated, not ${chatId}`,
        transient: false,
        refusal: "not_supported"
      }))
      : Effect.succeed(phone)
  }

  const send = (line: Line, { chatId, engineMessageId }: SendCommand, payload: Payload) =>
    Effect.gen(function*() {
      yield* requireReady(line)
      const earlier = HashMap.get(yield* Ref.get(sentMessages), engineMessageId)
      if (Option.isSome(earlier)) return yield* resend(line, engineMessageId, earlier.value)
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      if (chatId.endsWith("@g.us") || chatId.endsWith("@newsletter")) {
        const broadcast = chatId.endsWith("@g.us") ? broadcasts.toGroup : broadcasts.toChannel
        yield* broadcast(line, engineMessageId, chatId, payload, timestamp)
        return { engineMessageId, timestamp }
      }
      const recipientPhone = yield* personPhone(chatId)
      const senderPhone = line.me.phone
      const sent: SentMessage = { senderSessionId: line.sessionId, senderPhone, recipientPhone, timestamp, status: "pending" }
      yield* recordSent(engineMessageId, sent)
      yield* acknowledge(engineMessageId, "sent")
      const owner = HashMap.get(yield* Ref.get(phoneOwners), recipientPhone)
      const from = `${senderPhone}@c.us`
      if (Option.isSome(owner)) {
        yield* handTo(owner.value, received({ engineMessageId, chatId: from, from, fromLid: line.me.lid }, payload, timestamp))
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
      const from = `${echoPhone}@c.us`
      yield* handTo(sessionId, received({ engineMessageId: newSandboxMessageId(), chatId: from, from, fromLid: null }, payload, timestamp))
    })

  /**
   * Read receipts go only for messages this session received from that chat: from that person,
   * or in that group (where the sender hears `read` once every member session read it).
   */
  const markRead = (line: Line, chatId: string, engineMessageIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* requireReady(line)
      const senderPhone = phoneOfChatId(chatId)
      const sent = yield* Ref.get(sentMessages)
      const receivedHere = (message: SentMessage) =>
        message.awaiting === undefined
          ? message.recipientPhone === line.me.phone && message.senderPhone === senderPhone
          : message.recipientPhone === chatId && message.senderPhone !== line.me.phone
      yield* Effect.forEach(engineMessageIds, (engineMessageId) =>
        Option.match(Option.filter(HashMap.get(sent, engineMessageId), receivedHere), {
          onNone: () => Effect.void,
          onSome: () => receipt(engineMessageId, "read", line.me.phone)
        }), { discard: true })
    })

  /**
   * A reaction travels like a message to the other person of the chat, who sees it on the same
   * message id (sandbox ids are the same on both sides). Echo contacts ignore reactions.
   */
  const react = (line: Line, command: ReactCommand) =>
    Effect.gen(function*() {
      const { chatId, emoji, target } = command
      yield* requireReady(line)
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      if (chatId.endsWith("@g.us")) return yield* broadcasts.reactInGroup(line, command, timestamp)
      const otherPhone = yield* personPhone(chatId)
      const owner = HashMap.get(yield* Ref.get(phoneOwners), otherPhone)
      if (Option.isNone(owner)) return
      const from = `${line.me.phone}@c.us`
      yield* handTo(owner.value, EngineEvent.ReactionReceived({
        reaction: { chatId: from, from, targetEngineMessageId: target.engineMessageId, emoji, timestamp }
      }))
    })

  return { send, markRead, react }
}

/**
 * A message as its recipient receives it. `from` is the writer: a person's `…@c.us` (also its
 * `fromPhone`), or for a channel post the channel itself (no phone, no lid).
 */
export const received = (
  { chatId, engineMessageId, from, fromLid }: {
    readonly engineMessageId: string
    readonly chatId: string
    readonly from: string
    readonly fromLid: string | null
  },
  payload: Payload,
  timestamp: Date
) =>
  EngineEvent.MessageReceived({
    message: {
      engineMessageId,
      chatId,
      from,
      fromPhone: from.endsWith("@c.us") ? from : null,
      fromLid,
      timestamp,
      ...(payload.type === "text"
        ? { type: "text", text: payload.text }
        : { type: payload.kind, text: null, caption: payload.caption, media: payload.media })
    }
  })
