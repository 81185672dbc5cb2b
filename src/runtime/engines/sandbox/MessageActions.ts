import { Clock, Effect, HashMap, Option, Ref } from "effect"
import { STATUS_CHAT_ID } from "../../../domain/Chat.js"
import { EngineError, EngineEvent } from "../../Engine.js"
import type { EditCommand, MessageActionOperations, MessageTarget, PinCommand, PollVoteCommand } from "../../EngineMessageActions.js"
import { refuse } from "./Directory.js"
import type { HeldEvent, SentMessage } from "./Ledger.js"
import { personPhone } from "./Messaging.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * What a session does to messages already in a chat: edit and revoke its own, pin any, vote on a
 * poll, star (which stays on the account). Each reaches the other side of the chat like a
 * message, held until taken, on the same message id (sandbox ids are the same on both sides):
 * the other person, every other member of a group, a channel's followers (or, for a follower's
 * vote, its owner). The network checks what it can know: who wrote a message it carried, and
 * which options a poll it carried has. Runs under the network's lock (the operations take it).
 */

/** Who is on the other side of a group or a channel chat (see `Groups.ts`, `Channels.ts`). */
export interface ChatAudiences {
  readonly inGroup: (line: Line, groupId: string) => Effect.Effect<ReadonlyArray<{ readonly sessionId: string }>, EngineError>
  readonly inChannel: (
    line: Line,
    channelId: string
  ) => Effect.Effect<{ readonly from: string; readonly sessions: ReadonlyArray<{ readonly sessionId: string }> }, EngineError>
  /** The channel's own list of posts follows an edit (new text) or a revoke (`null`). */
  readonly revisePost: (channelId: string, postId: string, text: string | null) => Effect.Effect<void, EngineError>
  /** Whoever could see a status update (see `Status.ts`). */
  readonly statusAudience: (line: Line, sent: SentMessage, event: (chatIdThere: string, from: string) => HeldEvent) => Effect.Effect<void>
}

/** Only texts and the captions of photos, videos and documents can be edited, as on WhatsApp. */
const editableTypes: ReadonlyArray<SentMessage["type"]> = [undefined, "text", "image", "video", "document"]

const messageNotFound = (engineMessageId: string) =>
  refuse("not_found", "MESSAGE_NOT_FOUND", `the network carried no message ${engineMessageId} in this chat`)
const notWriter = (what: string) => refuse("forbidden", "NOT_MESSAGE_WRITER", `only the writer of a message may ${what} it`)

const isBroadcastChat = (chatId: string) => chatId.endsWith("@g.us") || chatId.endsWith("@newsletter") || chatId === STATUS_CHAT_ID

export const messageActionsOf = (switchboard: Switchboard, audiences: ChatAudiences) => {
  const { handTo, phoneOwners, recordDurably, requireReady, sentMessages, serialized } = switchboard

  /** A message the network carried in this chat, seen from this session's side of it. */
  const carriedIn = (line: Line, chatId: string, engineMessageId: string) =>
    Effect.gen(function*() {
      const sent = HashMap.get(yield* Ref.get(sentMessages), engineMessageId)
      if (Option.isNone(sent)) return Option.none<SentMessage>()
      const { recipientPhone, senderPhone } = sent.value
      if (isBroadcastChat(chatId)) return Option.some(sent.value).pipe(Option.filter(() => recipientPhone === chatId))
      const otherPhone = yield* personPhone(chatId)
      const between = (senderPhone === line.me.phone && recipientPhone === otherPhone) ||
        (senderPhone === otherPhone && recipientPhone === line.me.phone)
      return between ? sent : Option.none<SentMessage>()
    })

  /** This session's own message in the chat, which only it may edit or revoke. */
  const ownMessage = (line: Line, chatId: string, target: MessageTarget, what: string) =>
    Effect.gen(function*() {
      if (!target.fromMe) return yield* notWriter(what)
      const sent = yield* carriedIn(line, chatId, target.engineMessageId)
      if (Option.isNone(sent)) return yield* messageNotFound(target.engineMessageId)
      if (sent.value.senderSessionId !== line.sessionId) return yield* notWriter(what)
      return sent.value
    })

  /**
   * Hands what this session did to everyone on the other side of the chat. `event` is given the
   * chat as they see it (for a person, this session's own `…@c.us`) and the doer as they know it.
   */
  const tellOthers = (line: Line, chatId: string, event: (chatIdThere: string, from: string) => HeldEvent) =>
    Effect.gen(function*() {
      const me = `${line.me.phone}@c.us`
      if (chatId.endsWith("@g.us")) {
        const members = yield* audiences.inGroup(line, chatId)
        return yield* Effect.forEach(members, ({ sessionId }) => handTo(sessionId, event(chatId, me)), { discard: true })
      }
      if (chatId.endsWith("@newsletter")) {
        const { from, sessions } = yield* audiences.inChannel(line, chatId)
        return yield* Effect.forEach(sessions, ({ sessionId }) => handTo(sessionId, event(chatId, from)), { discard: true })
      }
      const owner = HashMap.get(yield* Ref.get(phoneOwners), yield* personPhone(chatId))
      // An echo contact, or nobody on this network: it has no session to tell.
      if (Option.isSome(owner)) yield* handTo(owner.value, event(me, me))
    })

  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

  const edit = (line: Line, { chatId, target, text }: EditCommand) =>
    Effect.gen(function*() {
      const sent = yield* ownMessage(line, chatId, target, "edit")
      if (sent.revoked === true) {
        return yield* refuse("conflict", "MESSAGE_REVOKED", `message ${target.engineMessageId} was deleted for everyone`)
      }
      if (!editableTypes.includes(sent.type)) {
        return yield* refuse("conflict", "NOT_EDITABLE", `a ${sent.type} message cannot be edited, only a text or a caption`)
      }
      const timestamp = yield* now
      if (chatId.endsWith("@newsletter")) yield* audiences.revisePost(chatId, target.engineMessageId, text)
      yield* tellOthers(line, chatId, (chatIdThere, from) =>
        EngineEvent.MessageEdited({ edit: { chatId: chatIdThere, from, targetEngineMessageId: target.engineMessageId, text, timestamp } })
      )
    })

  /**
   * Remembered, so that the message cannot be edited afterwards. Revoking again (a gateway that
   * retries after a crash) succeeds and tells nobody twice.
   */
  const revoke = (line: Line, chatId: string, target: MessageTarget) =>
    Effect.gen(function*() {
      const sent = yield* ownMessage(line, chatId, target, "delete")
      if (sent.revoked === true) return
      const timestamp = yield* now
      yield* recordDurably(target.engineMessageId, { ...sent, revoked: true })
      if (chatId.endsWith("@newsletter")) yield* audiences.revisePost(chatId, target.engineMessageId, null)
      const revoked = (chatIdThere: string, from: string) =>
        EngineEvent.MessageRevoked({ revoke: { chatId: chatIdThere, from, targetEngineMessageId: target.engineMessageId, timestamp } })
      yield* chatId === STATUS_CHAT_ID ? audiences.statusAudience(line, sent, revoked) : tellOthers(line, chatId, revoked)
    })

  /** Anyone in the chat may pin any of its messages, also one the network did not carry (an echo's). */
  const pin = (line: Line, { chatId, pinned, target }: PinCommand) =>
    Effect.gen(function*() {
      const timestamp = yield* now
      yield* tellOthers(line, chatId, (chatIdThere, from) =>
        EngineEvent.MessagePinned({ pin: { chatId: chatIdThere, from, targetEngineMessageId: target.engineMessageId, pinned, timestamp } })
      )
    })

  /** A vote names options of a poll this network carried in the chat: at most `selectableCount` (0: any), each once. */
  const votePoll = (line: Line, { chatId, options, target }: PollVoteCommand) =>
    Effect.gen(function*() {
      const sent = yield* carriedIn(line, chatId, target.engineMessageId)
      const poll = Option.flatMap(sent, (message) => Option.fromNullable(message.poll))
      if (Option.isNone(poll)) {
        return yield* refuse("not_found", "POLL_NOT_FOUND", `the network carried no poll ${target.engineMessageId} in this chat`)
      }
      const unknown = options.filter((option) => !poll.value.options.includes(option))
      if (unknown.length > 0) return yield* refuse("invalid", "UNKNOWN_POLL_OPTION", `the poll has no option ${JSON.stringify(unknown[0])}`)
      if (new Set(options).size !== options.length) return yield* refuse("invalid", "DUPLICATE_POLL_OPTION", "an option is named twice")
      const { selectableCount } = poll.value
      if (selectableCount > 0 && options.length > selectableCount) {
        return yield* refuse("invalid", "TOO_MANY_POLL_OPTIONS", `the poll allows at most ${selectableCount} option(s)`)
      }
      const timestamp = yield* now
      yield* tellOthers(line, chatId, (chatIdThere, voter) =>
        EngineEvent.PollVoteReceived({ vote: { chatId: chatIdThere, voter, targetEngineMessageId: target.engineMessageId, options, timestamp } })
      )
    })

  const operations = (line: Line): MessageActionOperations => {
    const run = <A>(effect: Effect.Effect<A, EngineError>) => serialized(Effect.zipRight(requireReady(line), effect))
    return {
      edit: (command) => run(edit(line, command)),
      revoke: (chatId, target) => run(revoke(line, chatId, target)),
      // Stars are the account's own bookmarks: nothing travels.
      star: () => run(Effect.void),
      pin: (command) => run(pin(line, command)),
      votePoll: (command) => run(votePoll(line, command))
    }
  }

  return { operations }
}
