import { getContentType, type proto } from "@whiskeysockets/baileys"
import type { ContactCard, LinkPreview, Location } from "../../../domain/Message.js"
import { parseVcard } from "../../../domain/vcard.js"
import type { PollDefinition } from "../../EngineMessageActions.js"

/**
 * What received messages of the kinds beyond text and media say, read from unwrapped content
 * (`normalizeMessageContent`): locations, contact cards, polls, and what a text or any message
 * may carry besides (a link preview, the forwarded mark).
 */

const textOrNull = (text: string | null | undefined): string | null => (typeof text === "string" && text !== "" ? text : null)

/** A pinned location (`locationMessage`), or a live one (`liveLocationMessage`) as where it was when shared. */
export const locationOf = (content: proto.IMessage): Location | null => {
  const pinned = content.locationMessage
  if (pinned != null) {
    return {
      latitude: pinned.degreesLatitude ?? 0,
      longitude: pinned.degreesLongitude ?? 0,
      name: textOrNull(pinned.name),
      address: textOrNull(pinned.address),
      url: textOrNull(pinned.url)
    }
  }
  const live = content.liveLocationMessage
  if (live != null) {
    return { latitude: live.degreesLatitude ?? 0, longitude: live.degreesLongitude ?? 0, name: textOrNull(live.caption), address: null, url: null }
  }
  return null
}

const cardOf = (contact: proto.Message.IContactMessage): ContactCard => parseVcard(contact.vcard ?? "", textOrNull(contact.displayName))

/** One card (`contactMessage`) or several (`contactsArrayMessage`). */
export const contactsOf = (content: proto.IMessage): ReadonlyArray<ContactCard> | null => {
  if (content.contactMessage != null) return [cardOf(content.contactMessage)]
  if (content.contactsArrayMessage != null) return (content.contactsArrayMessage.contacts ?? []).map(cardOf)
  return null
}

/**
 * A poll: `pollCreationMessage` (several choices), `…V3` (single choice), `…V2` (community
 * announcements). Its secret is the message's `messageContextInfo.messageSecret`, which sits
 * beside the poll, or on the envelope of a wrapped (ephemeral…) one.
 */
export const pollOf = (content: proto.IMessage, envelope: proto.IMessage | null | undefined): PollDefinition | null => {
  const creation = content.pollCreationMessageV3 ?? content.pollCreationMessage ?? content.pollCreationMessageV2
  if (creation == null) return null
  const secret = content.messageContextInfo?.messageSecret ?? envelope?.messageContextInfo?.messageSecret ?? null
  return {
    name: creation.name ?? "",
    options: (creation.options ?? []).map((option) => option.optionName ?? ""),
    selectableCount: creation.selectableOptionsCount ?? 0,
    secret: secret !== null && secret.length > 0 ? new Uint8Array(secret) : null
  }
}

/** The preview a sender attached to a text: WhatsApp marks the previewed link with `matchedText`. */
export const linkPreviewOf = (text: proto.Message.IExtendedTextMessage): LinkPreview | null => {
  const url = textOrNull(text.matchedText)
  if (url === null) return null
  const thumbnail = text.jpegThumbnail != null && text.jpegThumbnail.length > 0 ? Buffer.from(text.jpegThumbnail).toString("base64") : null
  return {
    url,
    title: textOrNull(text.title),
    description: textOrNull(text.description),
    ...(thumbnail === null ? {} : { thumbnail })
  }
}

/** Whether the sender marked the message forwarded (in the `contextInfo` of its main field). */
export const isForwarded = (content: proto.IMessage): boolean => {
  const type = getContentType(content)
  const main = type === undefined ? undefined : (content[type] as { readonly contextInfo?: proto.IContextInfo | null } | null | undefined)
  return main?.contextInfo?.isForwarded === true
}
