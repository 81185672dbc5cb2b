/**
 * The kinds of WhatsApp message beyond text, media and reactions, as a phone writes them, and
 * what kind a decrypted message is. Keys inside edits, revokes and pins name the target from the
 * SENDER's point of view (`fromMe`: the sender wrote it; `remoteJid`: the chat), like reactions
 * (./reactions.ts).
 *
 * Wire facts (WhatsApp phones; whatsmeow's BuildEdit / BuildRevoke / pin; Baileys rc14 reads
 * them through `normalizeMessageContent`, which unwraps `editedMessage`):
 * - edit: `editedMessage { message { protocolMessage { key, type: MESSAGE_EDIT (14),
 *   editedMessage: <new content>, timestampMs } } }`, stanza `edit="1"`
 * - revoke: `protocolMessage { key, type: REVOKE (0) }`, stanza `edit="7"` (`"8"`: an admin's)
 * - pin: `pinInChatMessage { key, type: PIN_FOR_ALL (1) | UNPIN_FOR_ALL (2), senderTimestampMs }`
 *   + `messageContextInfo.messageAddOnDurationInSecs` (86400 / 604800 / 2592000; 0 to unpin), `edit="2"`
 */
import { normalizeMessageContent, proto } from "@whiskeysockets/baileys"
import { pollOf } from "./polls.js"

/** What a decrypted message is, for tests to match on (`peer.waitFor("received", m => m.kind === "poll")`). */
export type MessageKind =
  | "text"
  | "image"
  | "video"
  | "audio"
  | "document"
  | "sticker"
  | "reaction"
  | "location"
  | "contact"
  | "contacts"
  | "poll"
  | "poll-vote"
  | "edit"
  | "revoke"
  | "pin"
  | "protocol"
  | "other"

const MEDIA = ["image", "video", "audio", "document", "sticker"] as const

/** The content inside ephemeral / view-once / edited / document-with-caption wrappers. */
export const contentOf = (message: proto.IMessage): proto.IMessage => normalizeMessageContent(message) ?? message

export const kindOf = (message: proto.IMessage): MessageKind => {
  const content = contentOf(message)
  const protocol = content.protocolMessage
  if (protocol) {
    if (protocol.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) return "edit"
    if (protocol.type === proto.Message.ProtocolMessage.Type.REVOKE) return "revoke"
    return "protocol"
  }
  if (content.reactionMessage) return "reaction"
  if (content.pinInChatMessage) return "pin"
  if (content.pollUpdateMessage) return "poll-vote"
  if (pollOf(content)) return "poll"
  if (content.locationMessage || content.liveLocationMessage) return "location"
  if (content.contactMessage) return "contact"
  if (content.contactsArrayMessage) return "contacts"
  for (const kind of MEDIA) if (content[`${kind}Message`]) return kind
  if (content.conversation != null || content.extendedTextMessage) return "text"
  return "other"
}

/** The id of the message an edit, revoke, pin, reaction or poll vote is about. */
export const targetOf = (message: proto.IMessage): string | undefined => {
  const content = contentOf(message)
  const key =
    content.protocolMessage?.key ??
    content.pinInChatMessage?.key ??
    content.reactionMessage?.key ??
    content.pollUpdateMessage?.pollCreationMessageKey
  return key?.id ?? undefined
}

/** The new text of an edit (text or caption), if the message is one. */
export const editedTextOf = (message: proto.IMessage): string | undefined => {
  const protocol = contentOf(message).protocolMessage
  if (protocol?.type !== proto.Message.ProtocolMessage.Type.MESSAGE_EDIT || !protocol.editedMessage) return undefined
  const edited = protocol.editedMessage
  return (
    edited.conversation ??
    edited.extendedTextMessage?.text ??
    edited.imageMessage?.caption ??
    edited.videoMessage?.caption ??
    edited.documentMessage?.caption ??
    undefined
  )
}

/** The `contextInfo` of the message's main part (where `isForwarded`, quotes and mentions live). */
export const contextInfoOf = (message: proto.IMessage): proto.IContextInfo | undefined => {
  const content = contentOf(message) as Record<string, unknown>
  for (const part of Object.values(content)) {
    if (part && typeof part === "object" && "contextInfo" in part) return (part as { contextInfo?: proto.IContextInfo | null }).contextInfo ?? undefined
  }
  return undefined
}

/** The `<message>` attributes WhatsApp adds for edits, revokes and pins (`edit`), none otherwise. */
export const stanzaEdit = (message: proto.IMessage): Record<string, string> => {
  switch (kindOf(message)) {
    case "edit":
      return { edit: "1" }
    case "revoke":
      return { edit: "7" }
    case "pin":
      return { edit: "2" }
    default:
      return {}
  }
}

export interface OutgoingLocation {
  readonly latitude: number
  readonly longitude: number
  readonly name?: string
  readonly address?: string
  readonly url?: string
}

export const locationMessage = (location: OutgoingLocation): proto.IMessage => ({
  locationMessage: {
    degreesLatitude: location.latitude,
    degreesLongitude: location.longitude,
    ...(location.name !== undefined ? { name: location.name } : {}),
    ...(location.address !== undefined ? { address: location.address } : {}),
    ...(location.url !== undefined ? { url: location.url } : {})
  }
})

/** A contact card; `vcard` (verbatim) wins over the one built from name / phone / organization. */
export interface OutgoingCard {
  readonly name: string
  /** digits, with or without "+" */
  readonly phone: string
  readonly organization?: string
  readonly vcard?: string
}

/** A vCard 3.0 as WhatsApp phones write it: the `waid` parameter makes the number tappable. */
export const phoneVcard = (card: OutgoingCard): string => {
  const digits = card.phone.replace(/[^0-9]/g, "")
  return [
    "BEGIN:VCARD",
    "VERSION:3.0",
    `N:;${card.name};;;`,
    `FN:${card.name}`,
    ...(card.organization ? [`ORG:${card.organization}`] : []),
    `TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`,
    "END:VCARD"
  ].join("\n")
}

/** One card: `contactMessage`; several: `contactsArrayMessage` (as Baileys and phones send them). */
export const contactsMessage = (cards: readonly OutgoingCard[]): proto.IMessage => {
  const messages = cards.map(card => ({ displayName: card.name, vcard: card.vcard ?? phoneVcard(card) }))
  if (messages.length === 0) throw new Error("a contact message needs at least one card")
  if (messages.length === 1) return { contactMessage: messages[0] }
  return { contactsArrayMessage: { displayName: `${messages.length} contacts`, contacts: messages } }
}

/** An edit of `targetId` (the sender's own message in `chatJid`) to `text`, wrapped as a phone does. */
export const editMessage = (chatJid: string, targetId: string, text: string): proto.IMessage => ({
  editedMessage: {
    message: {
      protocolMessage: {
        key: { remoteJid: chatJid, fromMe: true, id: targetId },
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        editedMessage: { conversation: text },
        timestampMs: Date.now()
      }
    }
  }
})

/** "Delete for everyone" of the sender's own message `targetId` in `chatJid`. */
export const revokeMessage = (chatJid: string, targetId: string): proto.IMessage => ({
  protocolMessage: { key: { remoteJid: chatJid, fromMe: true, id: targetId }, type: proto.Message.ProtocolMessage.Type.REVOKE }
})

/** Pin (for `durationSeconds`) or unpin `targetId`; `targetFromMe`: the sender wrote the target. */
export const pinMessage = (chatJid: string, targetId: string, targetFromMe: boolean, pin: { pinned: boolean; durationSeconds?: number | undefined }): proto.IMessage => ({
  pinInChatMessage: {
    key: { remoteJid: chatJid, fromMe: targetFromMe, id: targetId },
    type: pin.pinned ? proto.Message.PinInChatMessage.Type.PIN_FOR_ALL : proto.Message.PinInChatMessage.Type.UNPIN_FOR_ALL,
    senderTimestampMs: Date.now()
  },
  messageContextInfo: { messageAddOnDurationInSecs: pin.pinned ? (pin.durationSeconds ?? 86_400) : 0 }
})

/** A text with a link preview, as a phone that fetched the page sends it. */
export const linkPreviewMessage = (preview: {
  readonly text: string
  /** the URL as it appears in the text */
  readonly url: string
  readonly title?: string
  readonly description?: string
  readonly jpegThumbnail?: Uint8Array
}): proto.IMessage => ({
  extendedTextMessage: {
    text: preview.text,
    matchedText: preview.url,
    previewType: proto.Message.ExtendedTextMessage.PreviewType.NONE,
    ...(preview.title !== undefined ? { title: preview.title } : {}),
    ...(preview.description !== undefined ? { description: preview.description } : {}),
    ...(preview.jpegThumbnail !== undefined ? { jpegThumbnail: preview.jpegThumbnail } : {})
  }
})

/** `message` marked as forwarded (`contextInfo.isForwarded`, `forwardingScore`); a bare
 *  `conversation` becomes an `extendedTextMessage`, which is where the flag can live. */
export const forwardedMessage = (message: proto.IMessage, score = 1): proto.IMessage => {
  const content: proto.IMessage = message.conversation != null ? { extendedTextMessage: { text: message.conversation } } : { ...message }
  const [type, part] = Object.entries(content).find(([key]) => key !== "messageContextInfo") ?? []
  if (!type || !part || typeof part !== "object") throw new Error("nothing to forward")
  const withFlag = { ...part, contextInfo: { ...(part as { contextInfo?: proto.IContextInfo }).contextInfo, isForwarded: true, forwardingScore: score } }
  return { ...content, [type]: withFlag }
}
