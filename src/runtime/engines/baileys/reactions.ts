import type { BaileysEventMap } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import { EngineEvent } from "../../Engine.js"
import { noPhoneLookup, type PhoneOfLid, senderIdsOf } from "./jids.js"

/**
 * Baileys `messages.reaction` → `ReactionReceived`. A reaction is a Signal message of its own
 * (`reactionMessage`); Baileys reports it twice: as a `notify` upsert, which is not a chat
 * message (`readContent` ignores it), and as `messages.reaction`, handled here:
 * - `key`: the message reacted to, from this client's point of view (its `id` is what the Store knows);
 * - `reaction.key`: the reaction message's own key, i.e. who reacted and in which chat (with
 *   `remoteJidAlt` / `participantAlt` holding the phone JID when the reactor shows as a LID);
 * - `reaction.text`: the emoji, "" when the reaction was taken back;
 * - `reaction.senderTimestampMs`: when (a Long).
 */

/** Milliseconds as WhatsApp sends them (a Long, or a number when built by hand); now when absent. */
export const dateOfMillis = (millis: number | { toString(): string } | null | undefined): Date => {
  const value = millis == null ? 0 : Number(millis.toString())
  return Number.isFinite(value) && value > 0 ? new Date(value) : new Date()
}

export const fromReactions = (reactions: BaileysEventMap["messages.reaction"], phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const events: Array<EngineEvent> = []
    for (const { key: target, reaction } of reactions) {
      const own = reaction.key
      // This account's reactions (this socket's, or the phone's) come back too: the gateway
      // records the ones it sends itself.
      if (!target.id || own == null || own.fromMe) continue
      const ids = yield* senderIdsOf(own, phoneOfLid)
      if (ids === null) continue
      events.push(EngineEvent.ReactionReceived({
        reaction: {
          chatId: ids.chatId,
          from: ids.from,
          targetEngineMessageId: target.id,
          emoji: reaction.text ?? "",
          timestamp: dateOfMillis(reaction.senderTimestampMs)
        }
      }))
    }
    return events
  })
