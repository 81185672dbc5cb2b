import {
  type BaileysEventMap,
  normalizeMessageContent,
  proto,
  type WAMessage,
  type WAMessageUpdate
} from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { ContactCard, LinkPreview, Location, MessageStatus } from "../../../domain/Message.js"
import { EngineEvent, type InboundMessage } from "../../Engine.js"
import type { PollDefinition } from "../../EngineMessageActions.js"
import { noPhoneLookup, ownIdsOf, type PhoneOfLid, senderIdsOf } from "./jids.js"
import { type MediaContent, mediaContentOf, mediaRefOf } from "./media.js"
import type { Me } from "./messageActions.js"
import { actionEventsOf, noPolls, type PollLookup } from "./messageEvents.js"
import { contactsOf, isForwarded, linkPreviewOf, locationOf, pollOf } from "./messageKinds.js"

/**
 * Baileys message events → the engine's events. Pure apart from the LID → phone lookup, so
 * every case can be tested with plain `proto.WebMessageInfo` objects.
 */

const Status = proto.WebMessageInfo.Status
const StubType = proto.WebMessageInfo.StubType

/** `WebMessageInfo.Status` → the gateway's status; PENDING (and unknown values) → null, nothing to report. */
export const statusOf = (status: number | null | undefined): MessageStatus | null => {
  switch (status) {
    case Status.ERROR:
      return "failed"
    case Status.SERVER_ACK:
      return "sent"
    case Status.DELIVERY_ACK:
      return "delivered"
    case Status.READ:
      return "read"
    case Status.PLAYED:
      return "played"
    default:
      return null
  }
}

/** Names for the error codes WhatsApp puts on a negative ack (Baileys' `SERVER_ERROR_CODES`). */
const ackErrorNames: Record<string, string> = {
  "463": "ACCOUNT_RESTRICTED",
  "479": "SMAX_INVALID"
}

/** The error of a failed send: Baileys puts the ack's error code in `messageStubParameters[0]`. */
export const ackErrorOf = (stubParameters: unknown): { readonly code: string; readonly message: string } => {
  const params = Array.isArray(stubParameters) ? stubParameters.map(String) : []
  const raw = params[0]
  if (raw === undefined || raw === "") return { code: "SEND_FAILED", message: "baileys: WhatsApp rejected the message" }
  const detail = params.slice(1).join("; ")
  return {
    code: ackErrorNames[raw] ?? `ACK_ERROR_${raw}`,
    message: `baileys: WhatsApp rejected the message with error ${raw}${detail === "" ? "" : ` (${detail})`}`
  }
}

const statusChanged = (id: string, status: number | null | undefined, stubParameters: unknown): EngineEvent | null => {
  const mapped = statusOf(status)
  if (mapped === null) return null
  return mapped === "failed"
    ? EngineEvent.MessageStatusChanged({ engineMessageId: id, status: mapped, error: ackErrorOf(stubParameters) })
    : EngineEvent.MessageStatusChanged({ engineMessageId: id, status: mapped })
}

/** Content that is bookkeeping of the protocol, not something a person sent. */
const protocolOnlyKeys = new Set(["messageContextInfo", "senderKeyDistributionMessage"])
/**
 * Acts on another message (edits, revokes, reactions, votes, pins: see `messageEvents.ts`), or is
 * none: `call` is Baileys' own record of a group call ringing, reported as `CallChanged` instead.
 */
const notAMessageKeys = new Set([
  "call",
  "protocolMessage",
  "reactionMessage",
  "pollUpdateMessage",
  "keepInChatMessage",
  "encReactionMessage",
  "editedMessage",
  "pinInChatMessage"
])

type Readable =
  | { readonly kind: "text"; readonly text: string; readonly linkPreview: LinkPreview | null }
  | { readonly kind: "media"; readonly media: MediaContent }
  | { readonly kind: "location"; readonly location: Location }
  | { readonly kind: "contacts"; readonly contacts: ReadonlyArray<ContactCard> }
  | { readonly kind: "poll"; readonly poll: PollDefinition }
  | { readonly kind: "unsupported"; readonly contentType: string }
  | { readonly kind: "ignore" }

/** What a decrypted message says, after unwrapping ephemeral / view-once envelopes. */
export const readContent = (message: proto.IMessage | null | undefined): Readable => {
  const content = normalizeMessageContent(message)
  if (content == null) return { kind: "ignore" }
  if (typeof content.conversation === "string" && content.conversation !== "") {
    return { kind: "text", text: content.conversation, linkPreview: null }
  }
  const extended = content.extendedTextMessage
  if (typeof extended?.text === "string") return { kind: "text", text: extended.text, linkPreview: linkPreviewOf(extended) }
  const media = mediaContentOf(content)
  if (media !== null) return { kind: "media", media }
  const location = locationOf(content)
  if (location !== null) return { kind: "location", location }
  const contacts = contactsOf(content)
  if (contacts !== null) return { kind: "contacts", contacts }
  const poll = pollOf(content, message)
  if (poll !== null) return { kind: "poll", poll }
  const keys = Object.keys(content).filter((key) => (content as Record<string, unknown>)[key] != null)
  if (keys.some((key) => notAMessageKeys.has(key))) return { kind: "ignore" }
  const substantive = keys.filter((key) => !protocolOnlyKeys.has(key))
  return substantive.length === 0 ? { kind: "ignore" } : { kind: "unsupported", contentType: substantive[0]! }
}

const timestampOf = (message: WAMessage): Date => {
  const raw = message.messageTimestamp
  const seconds = typeof raw === "number" ? raw : raw == null ? 0 : Number(raw.toString())
  return seconds > 0 ? new Date(seconds * 1000) : new Date()
}

/**
 * One received message as the gateway stores it, or null when there is nothing to surface.
 * The account's own messages count only when `own` is given (history sync brings those the
 * phone sent); live, they are echoes of the gateway's sends.
 */
export const inboundOf = (message: WAMessage, phoneOfLid: PhoneOfLid = noPhoneLookup, own?: Me) =>
  Effect.gen(function*() {
    const key = message.key
    const id = key.id
    const fromMe = key.fromMe === true
    if (!id || (fromMe && own === undefined)) return null
    const stub = message.messageStubType
    // A message WhatsApp delivered but we could not decrypt: surfaced, not swallowed.
    const undecryptable = stub === StubType.CIPHERTEXT
    const readable = undecryptable ? null : readContent(message.message)
    if (readable !== null && readable.kind === "ignore") return null
    const ids = fromMe ? yield* ownIdsOf(key, own?.(), phoneOfLid) : yield* senderIdsOf(key, phoneOfLid)
    if (ids === null) return null
    const content = normalizeMessageContent(message.message)
    const forwarded = content != null && isForwarded(content) ? { forwarded: true } : {}
    const base = { engineMessageId: id, ...ids, timestamp: timestampOf(message), ...forwarded, ...(fromMe ? { fromMe: true } : {}) }
    if (readable === null) {
      const reason = Array.isArray(message.messageStubParameters) ? message.messageStubParameters.map(String).join("; ") : ""
      return {
        ...base,
        type: "unknown",
        text: null,
        error: { code: "DECRYPTION_FAILED", message: `baileys: the message could not be decrypted${reason === "" ? "" : ` (${reason})`}` }
      } satisfies InboundMessage
    }
    switch (readable.kind) {
      case "text": {
        const preview = readable.linkPreview === null ? {} : { linkPreview: readable.linkPreview }
        return { ...base, type: "text", text: readable.text, ...preview } satisfies InboundMessage
      }
      case "media": {
        const { caption, kind, ...media } = readable.media
        return { ...base, type: kind, text: null, caption, media: { ...media, ref: mediaRefOf(message) } } satisfies InboundMessage
      }
      case "location":
        return { ...base, type: "location", text: null, location: readable.location } satisfies InboundMessage
      case "contacts":
        return { ...base, type: "contact", text: null, contacts: readable.contacts } satisfies InboundMessage
      case "poll":
        return { ...base, type: "poll", text: null, poll: readable.poll } satisfies InboundMessage
    }
    return {
      ...base,
      type: "unknown",
      text: null,
      error: { code: "UNSUPPORTED_CONTENT", message: `baileys: ${readable.contentType} is not supported by this gateway yet` }
    } satisfies InboundMessage
  })

/**
 * `messages.upsert`: new messages from others, and the echoes of our own sends. An echo is no
 * new message, but its `status` counts: when a receipt lands while the upsert is still
 * buffered, Baileys merges the status into the upsert and fires no `messages.update`.
 * Edits, revokes, pins and poll votes of others arrive here too, as messages of their own.
 */
export const fromUpsert = (
  upsert: BaileysEventMap["messages.upsert"],
  phoneOfLid: PhoneOfLid = noPhoneLookup,
  polls: PollLookup = noPolls
) =>
  Effect.gen(function*() {
    const events: Array<EngineEvent> = []
    for (const message of upsert.messages) {
      if (message.key.fromMe) {
        const changed = message.key.id ? statusChanged(message.key.id, message.status, message.messageStubParameters) : null
        if (changed !== null) events.push(changed)
        continue
      }
      const actions = yield* actionEventsOf(message, phoneOfLid, polls)
      if (actions !== null) {
        events.push(...actions)
        continue
      }
      const inbound = yield* inboundOf(message, phoneOfLid)
      if (inbound !== null) events.push(EngineEvent.MessageReceived({ message: inbound }))
    }
    return events
  })

/** `messages.update`: receipts and error acks of messages this session sent. */
export const fromUpdates = (updates: ReadonlyArray<WAMessageUpdate>): Array<EngineEvent> => {
  const events: Array<EngineEvent> = []
  for (const { key, update } of updates) {
    // Only our own messages have a delivery status; read marks on received ones are ours.
    if (!key.fromMe || !key.id || update.status == null) continue
    const changed = statusChanged(key.id, update.status, update.messageStubParameters)
    if (changed !== null) events.push(changed)
  }
  return events
}
