import { normalizeMessageContent, proto, type WAMessage } from "@whiskeysockets/baileys"
import { Effect, Option } from "effect"
import { EngineEvent } from "../../Engine.js"
import type { StoredPoll } from "../../EngineMessageActions.js"
import { isLidJid, type PhoneOfLid, type SenderIds, senderIdsOf, toApiId, toWireJid } from "./jids.js"
import type { Me } from "./messageActions.js"
import { decryptPollVoteOptions } from "./polls.js"
import { dateOfMillis } from "./reactions.js"

/**
 * Received messages that act on another message of the chat rather than say something:
 * - `protocolMessage` REVOKE (deleted for everyone) → `MessageRevoked`;
 * - `protocolMessage` MESSAGE_EDIT, the new content in `editedMessage` → `MessageEdited`;
 * - `pinInChatMessage` → `MessagePinned`;
 * - `pollUpdateMessage`, a vote encrypted with the poll's secret → `PollVoteReceived`.
 * rc14 emits each as a `messages.upsert` like any message (and, for edits and revokes, a
 * `messages.update` on the target besides, which the engine leaves: the upsert says who did it).
 * It no longer decrypts votes itself (that code of `processMessage` is commented out), so
 * `getMessage` plays no part: the vote is decrypted here with the poll the Store keeps.
 */

/** What decrypting a vote needs: the poll (from the Store), and who this account is. */
export interface PollLookup {
  readonly lookupPoll: (engineMessageId: string) => Effect.Effect<Option.Option<StoredPoll>>
  readonly me: Me
}

export const noPolls: PollLookup = { lookupPoll: () => Effect.succeed(Option.none()), me: () => undefined }

const ProtocolType = proto.Message.ProtocolMessage.Type
const PinType = proto.Message.PinInChatMessage.Type

/** The new text of an edit: a text's, or a media message's caption. */
export const editedTextOf = (edited: proto.IMessage | null | undefined): string | null => {
  const content = normalizeMessageContent(edited)
  if (content == null) return null
  return content.conversation ??
    content.extendedTextMessage?.text ??
    content.imageMessage?.caption ??
    content.videoMessage?.caption ??
    content.documentMessage?.caption ??
    null
}

/** A user JID as votes name people (no device; `c.us` spelled `s.whatsapp.net`), or null. */
const userJidOf = (jid: string | null | undefined): string | null => {
  const api = toApiId(jid)
  return api === null ? null : toWireJid(api)
}

const distinct = (jids: ReadonlyArray<string | null | undefined>): Array<string> =>
  [...new Set(jids.map(userJidOf).filter((jid): jid is string => jid !== null))]

/**
 * The names the poll's creator may go by in the vote's key derivation: this account's phone
 * and LID when the poll is its own, else the creator the Store knows, the one the vote's key
 * names, and their phone when that is a LID.
 */
const creatorJidsOf = (poll: StoredPoll, key: proto.IMessageKey, polls: PollLookup, phoneOfLid: PhoneOfLid) =>
  Effect.gen(function*() {
    if (poll.fromMe) return distinct([polls.me()?.id, polls.me()?.lid])
    const named = distinct([toWireJid(poll.from), key.participant ?? key.remoteJid])
    const phones = yield* Effect.forEach(named.filter(isLidJid), (lid) => Effect.map(phoneOfLid(lid), Option.getOrNull))
    // Phones first: rc14 derives such keys from phone JIDs ("all jids need to be PN").
    return distinct([...phones, ...named].sort((a, b) => Number(isLidJid(a)) - Number(isLidJid(b))))
  })

const voteEventsOf = (
  update: proto.Message.IPollUpdateMessage,
  ids: SenderIds,
  polls: PollLookup,
  phoneOfLid: PhoneOfLid
) =>
  Effect.gen(function*() {
    const key = update.pollCreationMessageKey
    const pollId = key?.id
    if (key == null || !pollId || update.vote == null) return []
    const stored = yield* polls.lookupPoll(pollId)
    if (Option.isNone(stored) || stored.value.secret === null) {
      yield* Effect.logWarning("baileys: a vote on a poll whose secret is not known was left", { pollId })
      return []
    }
    const poll = stored.value
    const creators = yield* creatorJidsOf(poll, key, polls, phoneOfLid)
    const voters = distinct([ids.fromPhone, ids.fromLid])
    const options = decryptPollVoteOptions(update.vote, { secret: poll.secret!, options: poll.options }, pollId, creators, voters)
    if (options === null) {
      yield* Effect.logWarning("baileys: a poll vote could not be decrypted with the poll's secret", { pollId })
      return []
    }
    return [EngineEvent.PollVoteReceived({
      vote: { chatId: ids.chatId, voter: ids.from, targetEngineMessageId: pollId, options, timestamp: dateOfMillis(update.senderTimestampMs) }
    })]
  })

/**
 * The events of a received message that acts on another, or null when it is none of those
 * (then it is read as a message). The account's own actions (its phone's) are left to the
 * gateway, which records those it performs itself, as for reactions.
 */
export const actionEventsOf = (message: WAMessage, phoneOfLid: PhoneOfLid, polls: PollLookup) =>
  Effect.gen(function*() {
    const content = normalizeMessageContent(message.message)
    const protocol = content?.protocolMessage
    const isAction = (protocol != null && (protocol.type === ProtocolType.REVOKE || protocol.type === ProtocolType.MESSAGE_EDIT)) ||
      content?.pinInChatMessage != null ||
      content?.pollUpdateMessage != null
    if (content == null || !isAction) return null
    if (message.key.fromMe) return []
    const ids = yield* senderIdsOf(message.key, phoneOfLid)
    if (ids === null) return []
    const actor = { chatId: ids.chatId, from: ids.from }
    const sentAt = dateOfMillis(Number(message.messageTimestamp?.toString() ?? 0) * 1000)

    if (protocol != null) {
      const target = protocol.key?.id
      if (!target) return []
      if (protocol.type === ProtocolType.REVOKE) {
        return [EngineEvent.MessageRevoked({ revoke: { ...actor, targetEngineMessageId: target, timestamp: sentAt } })]
      }
      const text = editedTextOf(protocol.editedMessage)
      if (text === null) return []
      const timestamp = protocol.timestampMs == null ? sentAt : dateOfMillis(protocol.timestampMs)
      return [EngineEvent.MessageEdited({ edit: { ...actor, targetEngineMessageId: target, text, timestamp } })]
    }
    const pin = content.pinInChatMessage
    if (pin != null) {
      const target = pin.key?.id
      if (!target || (pin.type !== PinType.PIN_FOR_ALL && pin.type !== PinType.UNPIN_FOR_ALL)) return []
      return [EngineEvent.MessagePinned({
        pin: { ...actor, targetEngineMessageId: target, pinned: pin.type === PinType.PIN_FOR_ALL, timestamp: dateOfMillis(pin.senderTimestampMs) }
      })]
    }
    return yield* voteEventsOf(content.pollUpdateMessage!, ids, polls, phoneOfLid)
  })
