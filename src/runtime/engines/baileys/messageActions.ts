import { type Contact, generateMessageIDV2, proto, type WAMessageKey, type WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { MessageType } from "../../../domain/Message.js"
import { EngineError } from "../../Engine.js"
import type {
  EditCommand,
  MessageActionOperations,
  MessageTarget,
  PinCommand,
  PollVoteCommand
} from "../../EngineMessageActions.js"
import { engineErrorOf } from "./disconnect.js"
import { isGroupJid, toApiId, toWireJid } from "./jids.js"
import { appStateErrorOf } from "./labels.js"
import { encryptPollVote } from "./polls.js"

/**
 * What a connection does to messages already in a chat, through Baileys.
 * Each is a message of its own naming its target by key: an edit and a revoke are
 * `protocolMessage`s (MESSAGE_EDIT, REVOKE), a pin a `pinInChatMessage`, a vote a
 * `pollUpdateMessage`; a star is no message but an app-state patch synced to the account's
 * other devices. (Presence: `presence.ts`.)
 */

export type ActionSocket = Pick<WASocket, "sendMessage" | "relayMessage" | "chatModify">

/** The account as Baileys' credentials name it (`creds.me`), once logged in. */
export type Me = () => Contact | undefined

/** A message of the chat by key: who wrote it (in groups, the participant) and its id. */
export const keyOf = (chatId: string, target: MessageTarget): WAMessageKey => {
  const jid = toWireJid(chatId)
  return {
    remoteJid: jid,
    fromMe: target.fromMe,
    id: target.engineMessageId,
    ...(isGroupJid(jid) && !target.fromMe ? { participant: toWireJid(target.from) } : {})
  }
}

/** The account's own user JID (phone form, no device), as poll votes name their voter. */
const ownUserJid = (me: Me): string | null => {
  const id = me()?.id
  const api = id === undefined ? null : toApiId(id)
  return api === null ? null : toWireJid(api)
}

export const refusal = (code: string, message: string, refusal: EngineError["refusal"]) =>
  new EngineError({ code, message: `baileys: ${message}`, transient: false, refusal })

/** The field of a media message that holds its caption; the other kinds have none. */
const captionFields: Partial<Record<MessageType, "imageMessage" | "videoMessage" | "documentMessage">> = {
  image: "imageMessage",
  video: "videoMessage",
  document: "documentMessage"
}

/**
 * The `editedMessage` of an edit: a text is replaced by a text; a caption travels in a message
 * of the media's own kind holding only the caption, as WhatsApp's apps send it (the recipient
 * keeps the media and takes the new caption).
 */
export const editedMessageOf = (type: MessageType, text: string): proto.IMessage | EngineError => {
  if (type === "text") return { extendedTextMessage: { text } }
  const field = captionFields[type]
  if (field === undefined) return refusal("NOT_EDITABLE", `a ${type} message has no text or caption to edit`, "invalid")
  return { [field]: { caption: text } }
}

const edit = (sock: ActionSocket, me: Me, { chatId, target, text, type }: EditCommand) =>
  Effect.gen(function*() {
    const editedMessage = editedMessageOf(type, text)
    if (editedMessage instanceof EngineError) return yield* editedMessage
    const jid = toWireJid(chatId)
    const key = keyOf(chatId, target)
    yield* Effect.tryPromise({
      try: (): Promise<unknown> =>
        type === "text"
          // Baileys' own edit; `linkPreview: null` keeps it from fetching the page of a link in the text.
          ? sock.sendMessage(jid, { text, edit: key, linkPreview: null })
          // Baileys builds a caption edit only from new media (which it would upload): the
          // protocol message is sent as its `sendMessage` sends an edit (`edit="1"`).
          : sock.relayMessage(
            jid,
            proto.Message.fromObject({
              protocolMessage: { key, type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT, editedMessage, timestampMs: Date.now() }
            }),
            { messageId: generateMessageIDV2(me()?.id), additionalAttributes: { edit: "1" } }
          ),
      catch: (error) => engineErrorOf("EDIT", error)
    })
  })

const votePoll = (sock: ActionSocket, me: Me, { chatId, options, poll, target }: PollVoteCommand) =>
  Effect.gen(function*() {
    if (poll.secret === null) {
      return yield* refusal("POLL_SECRET_MISSING", "the poll's secret did not come with it: votes on it cannot be encrypted", "conflict")
    }
    const voterJid = ownUserJid(me)
    if (voterJid === null) return yield* refusal("NOT_LOGGED_IN", "the account is not logged in", "conflict")
    const creatorJid = target.fromMe ? voterJid : toWireJid(target.from)
    const vote = encryptPollVote(poll.secret, { pollId: target.engineMessageId, creatorJid, voterJid }, options)
    const message = proto.Message.fromObject({
      pollUpdateMessage: { pollCreationMessageKey: keyOf(chatId, target), vote, senderTimestampMs: Date.now() }
    })
    yield* Effect.tryPromise({
      // As WhatsApp's apps send a vote: a `poll` stanza with `<meta polltype="vote"/>`.
      try: () =>
        sock.relayMessage(toWireJid(chatId), message, {
          messageId: generateMessageIDV2(me()?.id),
          additionalNodes: [{ tag: "meta", attrs: { polltype: "vote" } }]
        }),
      catch: (error) => engineErrorOf("POLL_VOTE", error)
    })
  })

/** WhatsApp's pin durations are 24 hours, 7 days and 30 days. */
type PinSeconds = 86400 | 604800 | 2592000

const pin = (sock: ActionSocket, { chatId, durationSeconds, pinned, target }: PinCommand) =>
  Effect.tryPromise({
    try: () =>
      sock.sendMessage(toWireJid(chatId), {
        pin: keyOf(chatId, target),
        type: pinned ? proto.PinInChat.Type.PIN_FOR_ALL : proto.PinInChat.Type.UNPIN_FOR_ALL,
        time: durationSeconds as PinSeconds
      }),
    catch: (error) => engineErrorOf("PIN", error)
  })

export const makeMessageActions = (sock: ActionSocket, me: Me): MessageActionOperations => ({
  edit: (command) => edit(sock, me, command),
  revoke: (chatId, target) =>
    Effect.tryPromise({
      // In a group, a key naming another participant is an admin's revoke (Baileys marks it `edit="8"`).
      try: () => sock.sendMessage(toWireJid(chatId), { delete: keyOf(chatId, target) }),
      catch: (error) => engineErrorOf("REVOKE", error)
    }).pipe(Effect.asVoid),
  star: (chatId, target, starred) =>
    Effect.tryPromise({
      try: () => sock.chatModify({ star: { messages: [{ id: target.engineMessageId, fromMe: target.fromMe }], star: starred } }, toWireJid(chatId)),
      // a star is app state: refused as not ready until the phone has shared its app-state keys
      catch: appStateErrorOf("STAR")
    }),
  pin: (command) => Effect.asVoid(pin(sock, command)),
  votePoll: (command) => votePoll(sock, me, command)
})
