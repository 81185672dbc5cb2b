import { Clock, Effect, HashMap, Option, Ref } from "effect"
import { STATUS_CHAT_ID } from "../../../domain/Chat.js"
import { phoneOfChatId } from "../../../domain/Ids.js"
import type { ContactCard, LinkPreview, Location, MediaKind } from "../../../domain/Message.js"
import { parseVcard } from "../../../domain/vcard.js"
import {
  EngineError,
  EngineEvent,
  type InboundMedia,
  type InboundMessage,
  type OutboundContent,
  type ReactCommand,
  type SendCommand
} from "../../Engine.js"
import type { PollDefinition } from "../../EngineMessageActions.js"
import type { Conversations } from "./Chats.js"
import { isEchoPhone, newSandboxMessageId, sandboxPhoneOf } from "./identity.js"
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
  /** A status update to the audience the command names (see `Status.ts`). */
  readonly toStatus: (line: Line, engineMessageId: string, audience: ReadonlyArray<string> | undefined, payload: Payload, timestamp: Date) => Effect.Effect<void, EngineError>
}

/**
 * Sending and reading on the sandbox network, built on the switchboard's routing. Like the
 * switchboard's own operations these run under its lock; the caller takes it.
 */

/**
 * What a message carries to its recipients, as they will read it: media was uploaded before the
 * lock was taken, a link preview's thumbnail and the contact cards are already in their received form.
 */
export type Payload = PayloadContent & {
  /** Marked as forwarded by the sender. */
  readonly forwarded?: boolean | undefined
}

type PayloadContent =
  | { readonly type: "text"; readonly text: string; readonly linkPreview?: LinkPreview | undefined }
  | { readonly type: "media"; readonly kind: MediaKind; readonly caption: string | null; readonly media: InboundMedia }
  | { readonly type: "location"; readonly location: Location }
  | { readonly type: "contacts"; readonly contacts: ReadonlyArray<ContactCard> }
  | { readonly type: "poll"; readonly poll: PollDefinition }

/** Everything but media, whose bytes go to the media server first (see `SandboxNetwork`). */
export const payloadOfContent = (
  content: Exclude<OutboundContent, { readonly type: "media" }>
): PayloadContent => {
  switch (content.type) {
    case "text": {
      const preview = content.linkPreview
      return preview === undefined
        ? { type: "text", text: content.text }
        : {
          type: "text",
          text: content.text,
          linkPreview: {
            url: preview.url,
            title: preview.title,
            description: preview.description,
            ...(preview.thumbnail === null ? {} : { thumbnail: Buffer.from(preview.thumbnail).toString("base64") })
          }
        }
    }
    case "location":
      return content
    case "contacts":
      // The recipient reads the cards as any WhatsApp client would: from the vCards.
      return { type: "contacts", contacts: content.contacts.map(({ name, vcard }) => parseVcard(vcard, name)) }
    case "poll":
      return { type: "poll", poll: content.poll }
  }
}

/** The message type a payload arrives as. */
export const messageTypeOf = (payload: Payload): InboundMessage["type"] =>
  payload.type === "media" ? payload.kind : payload.type === "contacts" ? "contact" : payload.type

/** Its text as a list of posts shows it: the text, a caption, a place's or a poll's name. */
export const summaryOf = (payload: Payload): string | null => {
  switch (payload.type) {
    case "text":
      return payload.text
    case "media":
      return payload.caption
    case "location":
      return payload.location.name
    case "contacts":
      return payload.contacts.map((card) => card.name).join(", ")
    case "poll":
      return payload.poll.name
  }
}

/** Person chats by phone, groups and channels are simulated; the other person's phone, or why not. */
export const personPhone = (chatId: string) => {
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

/** Whether a session blocked a person (`…@c.us`): what that person sends it is not delivered. */
export type Blocks = (sessionId: string, personId: string) => Effect.Effect<boolean>

/** What an echo contact takes for "post this as your status". */
const echoStatusCommand = /^#status\s+([\s\S]+)$/

export const messagingOf = (switchboard: Switchboard, broadcasts: Broadcasts, conversations: Conversations, blocks: Blocks) => {
  const { acknowledge, afterWritten, handTo, phoneOwners, receipt, recordNew, requireReady, schedule, sentMessages } = switchboard

  const send = (line: Line, { chatId, engineMessageId, statusAudience }: SendCommand, payload: Payload) =>
    Effect.gen(function*() {
      yield* requireReady(line)
      const earlier = HashMap.get(yield* Ref.get(sentMessages), engineMessageId)
      if (Option.isSome(earlier)) return yield* resend(line, engineMessageId, earlier.value)
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      if (chatId === STATUS_CHAT_ID) {
        yield* broadcasts.toStatus(line, engineMessageId, statusAudience, payload, timestamp)
        return { engineMessageId, timestamp }
      }
      if (chatId.endsWith("@g.us") || chatId.endsWith("@newsletter")) {
        const broadcast = chatId.endsWith("@g.us") ? broadcasts.toGroup : broadcasts.toChannel
        yield* broadcast(line, engineMessageId, chatId, payload, timestamp)
        return { engineMessageId, timestamp }
      }
      const recipientPhone = yield* personPhone(chatId)
      const senderPhone = line.me.phone
      const sent: SentMessage = {
        senderSessionId: line.sessionId,
        senderPhone,
        recipientPhone,
        timestamp,
        status: "pending",
        ...contentRecordOf(payload)
      }
      const owner = HashMap.get(yield* Ref.get(phoneOwners), recipientPhone)
      const from = `${senderPhone}@c.us`
      // The sender's phone keeps the conversation, linked to a session or not: it is its history.
      // Literals, not `{ ...logged, chatId, fromMe }`: a spread followed by fields gives each
      // entry a hidden class of its own (~260 bytes more per entry, kept as long as the log).
      const fromLid = line.me.lid
      yield* conversations.record(senderPhone, { engineMessageId, chatId: `${recipientPhone}@c.us`, from, fromLid, fromMe: true, payload, timestamp })
      // A recipient that blocked the sender never gets it: it stays at `sent`, as on WhatsApp.
      const blocked = Option.isSome(owner) && (yield* blocks(owner.value, from))
      if (!blocked) yield* conversations.record(recipientPhone, { engineMessageId, chatId: from, from, fromLid, fromMe: false, payload, timestamp })
      if (!blocked && Option.isSome(owner)) {
        yield* handTo(owner.value, received({ engineMessageId, chatId: from, from, fromLid }, payload, timestamp))
      }
      // Recorded once held for the recipient, not before (issue 21): a gateway killed between the
      // two writes sends the message again, which the network then takes as new, and the
      // recipient's Store keeps it once. Recorded first, the resend was taken as a repeat of a
      // message the recipient never got.
      // Anyone else is nobody on this network: the message stays at `sent`, as for a phone that is off.
      const echoed = !blocked && Option.isNone(owner) && isEchoPhone(recipientPhone)
      yield* recordNew(
        engineMessageId,
        sent,
        echoed ? echo(line.sessionId, recipientPhone, engineMessageId, payload) : Effect.void
      )
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

  /**
   * An echo contact takes and reads what it got at once (listens to a voice note, as WhatsApp
   * reports with a `played` receipt), then answers: after its receipts, which reach the sender
   * once their records are written.
   */
  const echo = (sessionId: string, echoPhone: string, engineMessageId: string, payload: Payload) =>
    Effect.all([
      acknowledge(engineMessageId, "delivered"),
      acknowledge(engineMessageId, "read"),
      payload.type === "media" && payload.media.ptt ? acknowledge(engineMessageId, "played") : Effect.void,
      schedule(afterWritten(echoReply(sessionId, echoPhone, engineMessageId, payload)))
    ], { discard: true })

  /**
   * An echo contact answers with what it got (the same text, media, place or cards, not marked
   * as forwarded), and a poll with a vote for its first option. Written `#status <text>`, it
   * posts that text as a status update instead, seen by the writer.
   */
  const echoReply = (sessionId: string, echoPhone: string, engineMessageId: string, payload: Payload) =>
    Effect.gen(function*() {
      const timestamp = new Date(yield* Clock.currentTimeMillis)
      const echo = `${echoPhone}@c.us`
      const statusText = payload.type === "text" ? echoStatusCommand.exec(payload.text)?.[1] : undefined
      if (statusText !== undefined) {
        const update = received({ engineMessageId: newSandboxMessageId(), chatId: STATUS_CHAT_ID, from: echo, fromLid: null }, { type: "text", text: statusText }, timestamp)
        return yield* handTo(sessionId, update)
      }
      if (payload.type === "poll") {
        const vote = { chatId: echo, voter: echo, targetEngineMessageId: engineMessageId, options: payload.poll.options.slice(0, 1), timestamp }
        return yield* handTo(sessionId, EngineEvent.PollVoteReceived({ vote }))
      }
      const answer: Payload = { ...payload, forwarded: false }
      const reply = { engineMessageId: newSandboxMessageId(), chatId: echo, from: echo, fromLid: null }
      yield* conversations.record(sandboxPhoneOf(sessionId), {
        engineMessageId: reply.engineMessageId,
        chatId: echo,
        from: echo,
        fromLid: null,
        fromMe: false,
        payload: answer,
        timestamp
      })
      yield* handTo(sessionId, received(reply, answer, timestamp))
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

/** What the network remembers of a message's content: enough to check an edit or a vote against it. */
export const contentRecordOf = (payload: Payload): Pick<SentMessage, "type" | "poll"> => ({
  type: messageTypeOf(payload),
  ...(payload.type === "poll" ? { poll: { options: payload.poll.options, selectableCount: payload.poll.selectableCount } } : {})
})

/** The message's content as its recipient reads it. */
const inboundContentOf = (payload: Payload) => {
  switch (payload.type) {
    case "text":
      return { type: "text", text: payload.text, ...(payload.linkPreview === undefined ? {} : { linkPreview: payload.linkPreview }) } as const
    case "media":
      return { type: payload.kind, text: null, caption: payload.caption, media: payload.media } as const
    case "location":
      return { type: "location", text: null, location: payload.location } as const
    case "contacts":
      return { type: "contact", text: null, contacts: payload.contacts } as const
    case "poll":
      return { type: "poll", text: null, poll: payload.poll } as const
  }
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
      ...inboundContentOf(payload),
      ...(payload.forwarded === true ? { forwarded: true } : {})
    }
  })
