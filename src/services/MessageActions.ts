import { Context, DateTime, Deferred, Duration, Effect, Exit, Layer, Option } from "effect"
import {
  Conflict,
  type EngineCallError,
  type EngineTimeout,
  messageNotFound,
  NotFound,
  type StoreUnavailable,
  ValidationFailed
} from "../domain/Errors.js"
import { makeEvent } from "../domain/makeEvent.js"
import type { DeleteScope, Message, PinRequest, PollResults, PollVoteRequest } from "../domain/Message.js"
import { AppSettings } from "../domain/Settings.js"
import { engineCall } from "../runtime/EngineCall.js"
import type { MessageTarget } from "../runtime/EngineMessageActions.js"
import { Events } from "../runtime/Events.js"
import { markRevoked } from "../runtime/InboundChanges.js"
import { MediaStore } from "../runtime/ports/MediaStore.js"
import { ContactRepo } from "../runtime/ports/store/ContactRepo.js"
import { MessageRepo, type MessageRow } from "../runtime/ports/store/MessageRepo.js"
import { SessionRepo } from "../runtime/ports/store/SessionRepo.js"
import { Store } from "../runtime/ports/store/Store.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { refuseIfBlocked } from "./blockedRecipient.js"
import { existingSession } from "./sessionLookup.js"

/** How long WhatsApp lets a message be edited after it was sent. */
export const EDIT_WINDOW = Duration.minutes(15)
/** How long WhatsApp lets a message be deleted for everyone (about two days). */
export const REVOKE_WINDOW = Duration.days(2)
/**
 * How long an action on an own message still being sent waits for the network to take it:
 * a client that sends and at once edits, deletes, pins or votes is answered when the send
 * is through, not refused; past this wait (a long backlog, an offline session) it is 409.
 */
export const NETWORK_WAIT = Duration.seconds(10)

type ActionError = NotFound | Conflict | EngineCallError | EngineTimeout | StoreUnavailable

/** What can be done to a message already in a chat: edit, delete, star, pin, vote on a poll. */
export interface MessageActionsService {
  /** Replaces the text (or caption) of an own message within the edit window; the old one goes to `edits`. */
  readonly edit: (sessionId: string, messageId: string, text: string) => Effect.Effect<Message, ActionError>
  /**
   * `everyone` (the default for own messages) deletes it in the chat, within the revoke window;
   * `me` (the default for others') hides it here only.
   */
  readonly remove: (sessionId: string, messageId: string, scope: DeleteScope | undefined) => Effect.Effect<Message, ActionError>
  readonly star: (sessionId: string, messageId: string, starred: boolean) => Effect.Effect<Message, ActionError>
  readonly pin: (sessionId: string, messageId: string, request: PinRequest) => Effect.Effect<Message, ActionError>
  /** Votes on a poll of the chat (the whole choice: `[]` withdraws). */
  readonly votePoll: (sessionId: string, request: PollVoteRequest) => Effect.Effect<
    { readonly messageId: string; readonly chatId: string; readonly options: ReadonlyArray<string> },
    ActionError | ValidationFailed>
  readonly pollResults: (sessionId: string, messageId: string) => Effect.Effect<PollResults, NotFound | StoreUnavailable>
}

export class MessageActions extends Context.Tag("switchboard/MessageActions")<MessageActions, MessageActionsService>() {
  static readonly layer = Layer.effect(MessageActions, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const sessions = yield* SessionRepo
  const messages = yield* MessageRepo
  const contacts = yield* ContactRepo
  const supervisor = yield* SessionSupervisor
  const events = yield* Events
  const transactionally = (yield* Store).transactionally
  const { media } = yield* AppSettings
  /** What marking a message revoked needs (the same step as for a deletion others make). */
  const revokeContext = yield* Effect.context<MediaStore | MessageRepo | Store | Events>()

  /** The message, in this session (and this chat, when given), as the network knows it. */
  const findMessage = (sessionId: string, messageId: string, chatId?: string) =>
    Effect.gen(function*() {
      const session = yield* existingSession(sessions, sessionId)
      const row = Option.filter(
        yield* messages.findRow(messageId),
        (row) => row.sessionId === sessionId && (chatId === undefined || row.chatId === chatId)
      )
      if (Option.isNone(row)) {
        return yield* chatId === undefined
          ? messageNotFound(messageId)
          : new NotFound({ code: "MESSAGE_NOT_FOUND", message: `Message ${messageId} does not exist in chat ${chatId}` })
      }
      return { row: row.value, me: session.phone === null ? "" : `${session.phone}@c.us` }
    })

  /** The row as it is now; a message that was there a moment ago is still there (deletion is a flag). */
  const rowNow = (row: MessageRow) => Effect.map(messages.findRow(row.id), Option.getOrElse(() => row))

  /**
   * The row once it left `pending` (sent, or failed), or as it is after `NETWORK_WAIT`: the
   * change is seen as its `message.ack` (the network took it) or `message.failed` (the send
   * failed, or its batch was cancelled), each published after the change committed.
   */
  const leftPending = (row: MessageRow): Effect.Effect<MessageRow, StoreUnavailable> =>
    row.status !== "pending" ? Effect.succeed(row) : Effect.scoped(Effect.gen(function*() {
      const acked = yield* Deferred.make<void>()
      yield* events.observe((event) => {
        if (
          (event.event === "message.ack" || event.event === "message.failed") &&
          (event.data as { readonly messageId?: unknown }).messageId === row.id
        ) {
          Deferred.unsafeDone(acked, Exit.void)
        }
      })
      // Read again now that acks are watched: the send may have got through just before.
      const watched = yield* rowNow(row)
      if (watched.status !== "pending") return watched
      yield* Effect.ignore(Effect.timeout(Deferred.await(acked), NETWORK_WAIT))
      return yield* rowNow(row)
    }))

  /**
   * The message as the engine names it, once the network took it (waiting for a send still in
   * flight, see `NETWORK_WAIT`); one the network never took cannot be acted on there.
   */
  const targetOf = (pendingOrNot: MessageRow, code: string): Effect.Effect<MessageTarget, Conflict | StoreUnavailable> =>
    Effect.flatMap(leftPending(pendingOrNot), (row) =>
      row.engineMessageId === null || row.status === "pending" || row.status === "failed"
        ? Effect.fail(new Conflict({ code, message: `message ${row.id} has not reached the network (status ${row.status})` }))
        : Effect.succeed({ engineMessageId: row.engineMessageId, fromMe: row.fromMe, from: row.from }))

  const sentAgo = (row: MessageRow) =>
    Effect.map(DateTime.now, (now) => Duration.millis(DateTime.toEpochMillis(now) - Date.parse(row.timestamp)))

  const reread = (sessionId: string, messageId: string) =>
    Effect.flatMap(messages.findById(sessionId, messageId), Option.match({
      onNone: () => Effect.fail(messageNotFound(messageId)),
      onSome: Effect.succeed
    }))

  const nowIso = Effect.map(DateTime.now, DateTime.formatIso)

  const editRefusal = (message: string) => new Conflict({ code: "EDIT_NOT_ALLOWED", message })
  const revokeRefusal = (message: string) => new Conflict({ code: "REVOKE_NOT_ALLOWED", message })

  const edit = Effect.fn("MessageActions.edit")(function*(sessionId: string, messageId: string, text: string) {
    const { me, row } = yield* findMessage(sessionId, messageId)
    if (!row.fromMe) return yield* editRefusal("only messages this session sent can be edited")
    if (row.revoked) return yield* editRefusal("the message was deleted")
    if (row.text === null && row.caption === null && !["image", "video", "document"].includes(row.type)) {
      return yield* editRefusal(`a message of type ${row.type} has no text to edit`)
    }
    if (Duration.greaterThan(yield* sentAgo(row), EDIT_WINDOW)) {
      return yield* editRefusal("WhatsApp allows edits for 15 minutes after sending")
    }
    yield* refuseIfBlocked(contacts, sessionId, row.chatId)
    const target = yield* targetOf(row, "EDIT_NOT_ALLOWED")
    yield* supervisor.useConnection(sessionId, engineCall("MessageEdit", { chatId: row.chatId, target, type: row.type, text }))
    yield* transactionally(Effect.gen(function*() {
      const previous = yield* messages.edit(row.id, text, yield* nowIso)
      if (Option.isNone(previous)) return
      yield* events.publish(makeEvent("message.edited", sessionId, {
        messageId: row.id,
        chatId: row.chatId,
        text,
        previousText: previous.value,
        by: me
      }, yield* DateTime.nowAsDate))
    }))
    return yield* reread(sessionId, messageId)
  })

  const remove = Effect.fn("MessageActions.remove")(function*(sessionId: string, messageId: string, scope: DeleteScope | undefined) {
    const { me, row } = yield* findMessage(sessionId, messageId)
    if ((scope ?? (row.fromMe ? "everyone" : "me")) === "everyone") {
      if (!row.fromMe) return yield* revokeRefusal("only messages this session sent can be deleted for everyone")
      if (Duration.greaterThan(yield* sentAgo(row), REVOKE_WINDOW)) {
        return yield* revokeRefusal("WhatsApp allows deleting for everyone for about 2 days after sending")
      }
      if (!row.revoked) {
        const target = yield* targetOf(row, "REVOKE_NOT_ALLOWED")
        yield* supervisor.useConnection(sessionId, engineCall("MessageRevoke", { chatId: row.chatId, target }))
      }
    }
    yield* transactionally(Effect.provide(markRevoked(sessionId, row, me, media.keepRevoked), revokeContext))
    return yield* reread(sessionId, messageId)
  })

  const star = Effect.fn("MessageActions.star")(function*(sessionId: string, messageId: string, starred: boolean) {
    const { row } = yield* findMessage(sessionId, messageId)
    const target = yield* targetOf(row, "STAR_NOT_ALLOWED")
    yield* supervisor.useConnection(sessionId, engineCall("MessageStar", { chatId: row.chatId, target, starred }))
    yield* messages.setFlag(row.id, "starred", starred, yield* nowIso)
    return yield* reread(sessionId, messageId)
  })

  const pin = Effect.fn("MessageActions.pin")(function*(sessionId: string, messageId: string, request: PinRequest) {
    const { row } = yield* findMessage(sessionId, messageId)
    if (row.revoked) return yield* new Conflict({ code: "PIN_NOT_ALLOWED", message: "the message was deleted" })
    const target = yield* targetOf(row, "PIN_NOT_ALLOWED")
    const durationSeconds = (request.durationHours ?? 168) * 3600
    yield* supervisor.useConnection(
      sessionId,
      engineCall("MessagePin", { chatId: row.chatId, target, pinned: request.pinned, durationSeconds })
    )
    yield* messages.setFlag(row.id, "pinned", request.pinned, yield* nowIso)
    return yield* reread(sessionId, messageId)
  })

  const votePoll = Effect.fn("MessageActions.votePoll")(function*(sessionId: string, request: PollVoteRequest) {
    const { chatId, messageId, options } = request
    const { me, row } = yield* findMessage(sessionId, messageId, chatId)
    const poll = row.poll
    if (poll === null) return yield* new ValidationFailed({ code: "NOT_A_POLL", message: `message ${messageId} is not a poll` })
    const unknown = options.filter((option) => !poll.options.includes(option))
    if (unknown.length > 0) {
      return yield* new ValidationFailed({
        code: "UNKNOWN_POLL_OPTION",
        message: `the poll has no option ${unknown.map((option) => JSON.stringify(option)).join(", ")}`
      })
    }
    const choice = [...new Set(options)]
    if (poll.selectableCount > 0 && choice.length > poll.selectableCount) {
      return yield* new ValidationFailed({
        code: "TOO_MANY_POLL_OPTIONS",
        message: `the poll allows ${poll.selectableCount} option${poll.selectableCount === 1 ? "" : "s"} per voter`
      })
    }
    yield* refuseIfBlocked(contacts, sessionId, chatId)
    const target = yield* targetOf(row, "VOTE_NOT_ALLOWED")
    const secret = poll.secret === null ? null : Buffer.from(poll.secret, "base64")
    yield* supervisor.useConnection(sessionId, engineCall("PollVote", {
      chatId,
      target,
      poll: { name: poll.name, options: poll.options, selectableCount: poll.selectableCount, secret },
      options: choice
    }))
    yield* transactionally(Effect.gen(function*() {
      if (!(yield* messages.recordVote(row.id, me, choice, yield* nowIso))) return
      yield* events.publish(makeEvent("poll.vote", sessionId, { messageId, chatId, voter: me, options: choice }, yield* DateTime.nowAsDate))
    }))
    return { messageId, chatId, options: choice }
  })

  const pollResults = Effect.fn("MessageActions.pollResults")(function*(sessionId: string, messageId: string) {
    yield* existingSession(sessions, sessionId)
    const message = yield* reread(sessionId, messageId)
    if (message.poll === null) return yield* new NotFound({ code: "POLL_NOT_FOUND", message: `message ${messageId} is not a poll` })
    return message.poll
  })

  return { edit, remove, star, pin, votePoll, pollResults } satisfies MessageActionsService
})
