import {
  type BaileysEventMap,
  normalizeMessageContent,
  proto,
  type WAMessage,
  type WAMessageUpdate
} from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { MessageStatus } from "../../../domain/Message.js"
import { EngineEvent, type InboundMessage } from "../../Engine.js"
import { isStatusBroadcast, noPhoneLookup, type PhoneOfLid, senderIdsOf } from "./jids.js"
import { type MediaContent, mediaContentOf, mediaRefOf } from "./media.js"

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
const notAMessageKeys = new Set([
  "protocolMessage",
  "reactionMessage",
  "pollUpdateMessage",
  "keepInChatMessage",
  "encReactionMessage",
  "editedMessage"
])

type Readable =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "media"; readonly media: MediaContent }
  | { readonly kind: "unsupported"; readonly contentType: string }
  | { readonly kind: "ignore" }

/** What a decrypted message says, after unwrapping ephemeral / view-once envelopes. */
export const readContent = (message: proto.IMessage | null | undefined): Readable => {
  const content = normalizeMessageContent(message)
  if (content == null) return { kind: "ignore" }
  if (typeof content.conversation === "string" && content.conversation !== "") {
    return { kind: "text", text: content.conversation }
  }
  const extended = content.extendedTextMessage?.text
  if (typeof extended === "string") return { kind: "text", text: extended }
  const media = mediaContentOf(content)
  if (media !== null) return { kind: "media", media }
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

/** One received message as the gateway stores it, or null when there is nothing to surface. */
export const inboundOf = (message: WAMessage, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const key = message.key
    const id = key.id
    if (!id || key.fromMe || isStatusBroadcast(key.remoteJid)) return null
    const stub = message.messageStubType
    // A message WhatsApp delivered but we could not decrypt: surfaced, not swallowed.
    const undecryptable = stub === StubType.CIPHERTEXT
    const readable = undecryptable ? null : readContent(message.message)
    if (readable !== null && readable.kind === "ignore") return null
    const ids = yield* senderIdsOf(key, phoneOfLid)
    if (ids === null) return null
    const base = { engineMessageId: id, ...ids, timestamp: timestampOf(message) }
    if (readable === null) {
      const reason = Array.isArray(message.messageStubParameters) ? message.messageStubParameters.map(String).join("; ") : ""
      return {
        ...base,
        type: "unknown",
        text: null,
        error: { code: "DECRYPTION_FAILED", message: `baileys: the message could not be decrypted${reason === "" ? "" : ` (${reason})`}` }
      } satisfies InboundMessage
    }
    if (readable.kind === "text") return { ...base, type: "text", text: readable.text } satisfies InboundMessage
    if (readable.kind === "media") {
      const { caption, kind, ...media } = readable.media
      return { ...base, type: kind, text: null, caption, media: { ...media, ref: mediaRefOf(message) } } satisfies InboundMessage
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
 */
export const fromUpsert = (upsert: BaileysEventMap["messages.upsert"], phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const events: Array<EngineEvent> = []
    for (const message of upsert.messages) {
      if (message.key.fromMe) {
        const changed = message.key.id ? statusChanged(message.key.id, message.status, message.messageStubParameters) : null
        if (changed !== null) events.push(changed)
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
