import { Effect, Option } from "effect"
import { MessageRepo } from "../layers/store/MessageRepo.js"
import { SessionRepo } from "../layers/store/SessionRepo.js"
import { Events, makeEvent } from "../services/Events.js"
import { uuidv7 } from "../services/Ids.js"
import type { LastError, SessionStatus } from "../services/Session.js"
import type { EngineEvent, InboundMessage } from "./Engine.js"

export interface InboundContext {
  readonly sessionId: string
  readonly setStatus: (next: SessionStatus, error?: Omit<LastError, "at">) => Effect.Effect<void>
  readonly showQr: (qr: { readonly qr: string; readonly expiresAt: Date }) => Effect.Effect<void>
  readonly markReady: Effect.Effect<void>
}

/**
 * Maps what an engine reports to the session's state, the Store and domain events. The Store
 * is written first, so that everything published can be read back.
 */
export const handleEngineEvent = (event: EngineEvent, context: InboundContext) =>
  Effect.gen(function*() {
    switch (event._tag) {
      case "Qr":
        return yield* context.showQr({ qr: event.qr, expiresAt: event.expiresAt })
      case "Authenticating":
        return yield* context.setStatus("authenticating")
      case "Ready": {
        const sessions = yield* SessionRepo
        const { phone, pushName, lid } = event.me
        yield* sessions.update(context.sessionId, { phone, pushName, lid })
        return yield* context.markReady
      }
      case "MessageReceived":
        return yield* storeInbound(context.sessionId, event.message)
      case "MessageStatusChanged":
        return yield* applyStatus(context.sessionId, event)
      case "Closed":
        return
    }
  })

const storeInbound = (sessionId: string, inbound: InboundMessage) =>
  Effect.gen(function*() {
    const messages = yield* MessageRepo
    const existing = yield* messages.findByEngineId(sessionId, inbound.engineMessageId)
    if (Option.isSome(existing)) {
      // Engines hand over the same message again after a reconnect: once is enough. But one
      // that could not be read before (WhatsApp resends after a decryption failure) and can
      // be now takes its content, and is announced as received.
      const readable = inbound.type !== "unknown" && existing.value.type === "unknown"
      if (!readable) return
      if (!(yield* messages.reviseUnreadable(existing.value.id, inbound, new Date().toISOString()))) return
      return yield* announceReceived(sessionId, existing.value.id, inbound)
    }
    const sessions = yield* SessionRepo
    const me = Option.flatMapNullable(yield* sessions.findById(sessionId), (row) => row.phone)
    const id = uuidv7()
    const at = new Date().toISOString()
    yield* messages.insert({
      id,
      sessionId,
      chatId: inbound.chatId,
      from: inbound.from,
      to: Option.match(me, { onNone: () => "", onSome: (phone) => `${phone}@c.us` }),
      fromMe: false,
      type: inbound.type,
      text: inbound.text,
      caption: null,
      status: "delivered",
      ack: 2,
      error: inbound.error ?? null,
      engineMessageId: inbound.engineMessageId,
      quotedMessageId: null,
      mentions: null,
      batchId: null,
      timestamp: inbound.timestamp.toISOString(),
      createdAt: at,
      updatedAt: at
    })
    yield* announceReceived(sessionId, id, inbound)
  })

const announceReceived = (sessionId: string, id: string, inbound: InboundMessage) =>
  Effect.gen(function*() {
    const message = yield* (yield* MessageRepo).findById(sessionId, id)
    if (Option.isNone(message)) return
    // Both ids of the sender, as far as known (WhatsApp increasingly shows only the LID).
    yield* (yield* Events).publish(makeEvent("message.received", sessionId, {
      message: message.value,
      phone: inbound.fromPhone,
      lid: inbound.fromLid
    }))
  })

const applyStatus = (
  sessionId: string,
  event: Extract<EngineEvent, { _tag: "MessageStatusChanged" }>
) =>
  Effect.gen(function*() {
    const messages = yield* MessageRepo
    const events = yield* Events
    const row = yield* messages.findByEngineId(sessionId, event.engineMessageId)
    if (Option.isNone(row)) return yield* Effect.logDebug("status for an unknown message", event.engineMessageId)
    const changed = yield* messages.updateStatus(row.value.id, event.status, new Date().toISOString(), event.error)
    if (Option.isNone(changed)) return
    const { previousStatus, row: updated } = changed.value
    // `message.sent` marks the network taking the message (one tick), with the message as
    // stored; an engine that reports no server ack goes from pending straight to delivered.
    if (previousStatus === "pending" && updated.status !== "failed") {
      const message = yield* messages.findById(sessionId, updated.id)
      if (Option.isSome(message)) yield* events.publish(makeEvent("message.sent", sessionId, { message: message.value }))
    }
    yield* events.publish(makeEvent("message.ack", sessionId, {
      messageId: updated.id,
      chatId: updated.chatId,
      status: updated.status,
      ack: updated.ack,
      previousStatus
    }))
    if (updated.status === "failed") {
      yield* events.publish(makeEvent("message.failed", sessionId, {
        messageId: updated.id,
        chatId: updated.chatId,
        error: updated.error
      }))
    }
  })
