import { DateTime, Effect, Option } from "effect"
import { makeEvent } from "../domain/makeEvent.js"
import type { InboundEdit, InboundPin, InboundPollVote, InboundPresence, InboundRevoke } from "./EngineMessageActions.js"
import { Events } from "./Events.js"
import { mediaKey, MediaStore, type MediaStoreService } from "./ports/MediaStore.js"
import { MessageRepo, type MessageRow } from "./ports/store/MessageRepo.js"
import { PresenceRepo } from "./ports/store/PresenceRepo.js"
import { Store } from "./ports/store/Store.js"

/**
 * What others do to messages already in a chat (edits, deletions, poll votes, pins), and their
 * presence: applied to the Store and announced, each in the transaction of its caller. A change
 * to a message the Store does not know (older than the session, or deleted) is dropped.
 */

const target = (sessionId: string, engineMessageId: string, what: string) =>
  Effect.gen(function*() {
    const row = yield* (yield* MessageRepo).findByEngineId(sessionId, engineMessageId)
    if (Option.isNone(row)) yield* Effect.logDebug(`${what} of an unknown message`, engineMessageId)
    return row
  })

/** Only a message's writer can edit or delete it for everyone: anything else is not believed. */
const byWriter = (row: MessageRow, from: string) => row.fromMe || row.from === from

export const applyEdit = (sessionId: string, edit: InboundEdit) =>
  Effect.gen(function*() {
    const row = yield* target(sessionId, edit.targetEngineMessageId, "an edit")
    if (Option.isNone(row) || !byWriter(row.value, edit.from)) return
    const previous = yield* (yield* MessageRepo).edit(row.value.id, edit.text, edit.timestamp.toISOString())
    if (Option.isNone(previous)) return
    yield* (yield* Events).publish(makeEvent("message.edited", sessionId, {
      messageId: row.value.id,
      chatId: row.value.chatId,
      text: edit.text,
      previousText: previous.value,
      by: edit.from
    }, yield* DateTime.nowAsDate))
  })

/**
 * The text and media go with the message (the writer took them back); the media's bytes too,
 * unless `keepMedia` (`KEEP_REVOKED_MEDIA`). The bytes are removed once the row saying so is
 * committed: a failed removal leaves an orphan file, never a message pointing at nothing.
 */
export const applyRevoke = (sessionId: string, revoke: InboundRevoke, keepMedia: boolean) =>
  Effect.gen(function*() {
    const row = yield* target(sessionId, revoke.targetEngineMessageId, "a revoke")
    if (Option.isNone(row) || !byWriter(row.value, revoke.from)) return
    yield* markRevoked(sessionId, row.value, revoke.from, keepMedia)
  })

/** Marks a message revoked and announces it; false when it already was. */
export const markRevoked = (sessionId: string, row: MessageRow, by: string, keepMedia: boolean) =>
  Effect.gen(function*() {
    const revoked = yield* (yield* MessageRepo).revoke(row.id, DateTime.formatIso(yield* DateTime.now))
    if (!revoked) return false
    yield* (yield* Events).publish(makeEvent("message.revoked", sessionId, {
      messageId: row.id,
      chatId: row.chatId,
      by
    }, yield* DateTime.nowAsDate))
    if (row.media?.stored === true && !keepMedia) {
      const media = yield* MediaStore
      yield* (yield* Store).afterCommit(forgetMedia(media, sessionId, row.id))
    }
    return true
  })

export const forgetMedia = (media: MediaStoreService, sessionId: string, messageId: string) =>
  media.remove(mediaKey(sessionId, messageId)).pipe(
    Effect.catchAll((error) => Effect.logWarning("the media of a revoked message could not be removed", error.message))
  )

export const applyPollVote = (sessionId: string, vote: InboundPollVote) =>
  Effect.gen(function*() {
    const row = yield* target(sessionId, vote.targetEngineMessageId, "a poll vote")
    if (Option.isNone(row) || row.value.poll === null) return
    const known = new Set(row.value.poll.options)
    const options = vote.options.filter((option) => known.has(option))
    const changed = yield* (yield* MessageRepo).recordVote(row.value.id, vote.voter, options, vote.timestamp.toISOString())
    if (!changed) return
    yield* (yield* Events).publish(makeEvent("poll.vote", sessionId, {
      messageId: row.value.id,
      chatId: row.value.chatId,
      voter: vote.voter,
      options
    }, yield* DateTime.nowAsDate))
  })

export const applyPin = (sessionId: string, pin: InboundPin) =>
  Effect.gen(function*() {
    const row = yield* target(sessionId, pin.targetEngineMessageId, "a pin")
    if (Option.isNone(row)) return
    yield* (yield* MessageRepo).setFlag(row.value.id, "pinned", pin.pinned, pin.timestamp.toISOString())
  })

export const applyPresence = (sessionId: string, presence: InboundPresence) =>
  Effect.gen(function*() {
    const now = yield* DateTime.nowAsDate
    const lastSeen = presence.lastSeen === null ? null : presence.lastSeen.toISOString()
    yield* (yield* PresenceRepo).record(sessionId, {
      chatId: presence.chatId,
      state: presence.state,
      lastSeen,
      updatedAt: now.toISOString()
    })
    yield* (yield* Events).publish(makeEvent("presence.update", sessionId, {
      chatId: presence.chatId,
      state: presence.state,
      lastSeen
    }, now))
  })
