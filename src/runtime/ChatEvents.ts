import { DateTime, Effect, Option } from "effect"
import { STATUS_CHAT_ID } from "../domain/Chat.js"
import { makeEvent } from "../domain/makeEvent.js"
import { settingsOrDefault } from "../domain/SessionSettings.js"
import { recordContacts } from "./DirectoryEvents.js"
import type { InboundMessage } from "./Engine.js"
import type { HistoryBatch, InboundChatChange } from "./EngineAccount.js"
import { Events } from "./Events.js"
import { forgetMedia } from "./InboundChanges.js"
import { type InboundContext, receivedRow } from "./InboundEvents.js"
import { MediaStore } from "./ports/MediaStore.js"
import { type ChatFields, ChatRepo } from "./ports/store/ChatRepo.js"
import { MessageRepo } from "./ports/store/MessageRepo.js"
import { SessionRepo } from "./ports/store/SessionRepo.js"
import { Store } from "./ports/store/Store.js"

/**
 * The chat list's changes and the phone's history. A change is written and announced as
 * `chat.update {chatId, changes}` (only what changed) in the caller's transaction, whether it
 * came from the API (services/Chats.ts) or from the account's other devices.
 */

/** Sets the fields and announces what changed; `create` for a chat the network names first. */
export const recordChatChange = (sessionId: string, chatId: string, fields: ChatFields, create = false) =>
  Effect.gen(function*() {
    const now = yield* DateTime.nowAsDate
    const changes = yield* (yield* ChatRepo).update(sessionId, chatId, fields, now.toISOString(), create)
    if (Object.keys(changes).length === 0) return changes
    yield* (yield* Events).publish(makeEvent("chat.update", sessionId, { chatId, changes }, now))
    return changes
  })

/**
 * Removes the chat and its messages and announces it; the media bytes go once that is
 * committed (a failed removal leaves an orphan file, never a message pointing at nothing).
 * False when the chat was not there.
 */
export const removeChat = (sessionId: string, chatId: string) =>
  Effect.gen(function*() {
    const removed = yield* (yield* ChatRepo).remove(sessionId, chatId)
    if (Option.isNone(removed)) return false
    yield* (yield* Events).publish(makeEvent("chat.update", sessionId, { chatId, changes: { deleted: true } }, yield* DateTime.nowAsDate))
    const media = yield* MediaStore
    yield* (yield* Store).afterCommit(Effect.forEach(removed.value.messagesWithMedia, (id) => forgetMedia(media, sessionId, id), { discard: true }))
    return true
  })

const fieldsOf = (change: InboundChatChange): ChatFields => ({
  name: change.name,
  archived: change.archived,
  pinned: change.pinned,
  mutedUntil: change.mutedUntil === undefined ? undefined : change.mutedUntil === null ? null : change.mutedUntil.toISOString(),
  unreadCount: change.unreadCount
})

/**
 * The phone read the chat: its incoming messages still `delivered` are `read` here too, so that a
 * later read through the API (which counts what is still delivered) leaves the right unread
 * count. No receipts are sent: the phone has sent them.
 */
const markChatReadOnPhone = (sessionId: string, chatId: string) =>
  Effect.gen(function*() {
    const messages = yield* MessageRepo
    const unread = yield* messages.list(sessionId, { chatId, direction: "in", status: "delivered" }, Option.none())
    const at = DateTime.formatIso(yield* DateTime.now)
    yield* Effect.forEach(unread.items, (message) => messages.updateStatus(message.id, "read", at), { discard: true })
  })

/** Chats changed on another device (archived, pinned, muted, read, deleted, renamed): the list follows. */
export const applyChatChanges = (sessionId: string, changes: ReadonlyArray<InboundChatChange>) =>
  Effect.flatMap(Store, ({ transactionally }) =>
    Effect.forEach(changes, (change) =>
      transactionally(Effect.gen(function*() {
        if (change.deleted === true) return yield* removeChat(sessionId, change.chatId)
        yield* recordChatChange(sessionId, change.chatId, fieldsOf(change), true)
        if (change.unreadCount === 0) yield* markChatReadOnPhone(sessionId, change.chatId)
      })), { discard: true })
  )

/**
 * One batch of the phone's history: its messages stored with `source: "history"` (those already
 * stored are skipped), its chats and contact names recorded, and ONE `session.history` event for
 * the batch instead of an event per message. Nothing when the session's `historySync` is off,
 * unless the batch answers an explicit request for history.
 */
export const importHistory = (context: InboundContext, batch: HistoryBatch) =>
  Effect.gen(function*() {
    const { sessionId } = context
    const session = yield* (yield* SessionRepo).findById(sessionId)
    if (Option.isNone(session)) return
    if (settingsOrDefault(session.value.settings).historySync === "off" && !batch.onDemand) return
    const me = session.value.phone === null ? "" : `${session.value.phone}@c.us`
    const messages = yield* MessageRepo
    const fresh = yield* Effect.filter(batch.messages, (message) =>
      Effect.map(messages.findByEngineId(sessionId, message.engineMessageId), Option.isNone))
    // Media is fetched outside the transaction, as for live messages.
    const rows = yield* Effect.forEach(fresh, (message) => historyRow(context, me, message))
    const chats = new Set([...batch.chats.map((chat) => chat.chatId), ...rows.map((row) => row.chatId)])
    chats.delete(STATUS_CHAT_ID)
    yield* (yield* Store).transactionally(Effect.gen(function*() {
      yield* Effect.forEach(rows, messages.insert, { discard: true })
      const repo = yield* ChatRepo
      const at = DateTime.formatIso(yield* DateTime.now)
      yield* Effect.forEach(batch.chats, (chat) => repo.update(sessionId, chat.chatId, fieldsOf(chat), at, true), { discard: true })
      yield* recordContacts(sessionId, batch.contacts.map(({ chatId, name }) => ({
        phone: chatId.endsWith("@c.us") ? chatId : null,
        lid: chatId.endsWith("@lid") ? chatId : null,
        name
      })))
      yield* (yield* Events).publish(makeEvent("session.history", sessionId, {
        chats: chats.size,
        messages: rows.length,
        progress: batch.progress
      }, yield* DateTime.nowAsDate))
    }))
  })

/** A message of the history as stored: the account's own ones `sent`, the others already `read` on the phone. */
const historyRow = (context: InboundContext, me: string, inbound: InboundMessage) => {
  const fromMe = inbound.fromMe === true
  return receivedRow(context, inbound, {
    from: fromMe ? me : inbound.from,
    to: fromMe ? inbound.chatId : me,
    fromMe,
    status: fromMe ? "sent" : "read",
    ack: fromMe ? 1 : 3,
    source: "history"
  })
}
