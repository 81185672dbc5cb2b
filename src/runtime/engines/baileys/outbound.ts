import type { AnyMessageContent, proto, WAMessage, WAUrlInfo } from "@whiskeysockets/baileys"
import type { OutboundContent, OutboundLinkPreview, QuotedMessage } from "../../Engine.js"
import { mediaMessageOf } from "./media.js"
import { keyOf } from "./messageActions.js"

/**
 * What the gateway sends, in the terms of Baileys' `sendMessage`, which builds the WhatsApp
 * message from them (`generateWAMessageContent`): a text becomes an `extendedTextMessage`, a
 * location a `locationMessage`, one card a `contactMessage` and several a `contactsArrayMessage`,
 * a poll a `pollCreationMessageV3` (single choice) or `pollCreationMessage` (several choices,
 * as WhatsApp's own apps send them) with the secret in `messageContextInfo.messageSecret`.
 */

export interface OutboundExtras {
  /** Wire JIDs of the mentioned people (a text, a caption). */
  readonly mentions: ReadonlyArray<string>
  readonly forwarded: boolean
}

/**
 * The preview the gateway fetched (through its SSRF guard and the session's proxy). Passing one,
 * or `null` when there is none, keeps Baileys from fetching the page itself (`getUrlInfo`).
 */
const urlInfoOf = (preview: OutboundLinkPreview): WAUrlInfo => ({
  "canonical-url": preview.url,
  // WhatsApp finds the preview's link in the text by this.
  "matched-text": preview.url,
  title: preview.title ?? "",
  ...(preview.description === null ? {} : { description: preview.description }),
  ...(preview.thumbnail === null
    ? {}
    : { jpegThumbnail: Buffer.from(preview.thumbnail.buffer, preview.thumbnail.byteOffset, preview.thumbnail.byteLength) })
})

/** What every kind of WhatsApp message carries in its `contextInfo` when it was forwarded. */
export const forwardedContext: proto.IContextInfo = { isForwarded: true, forwardingScore: 1 }

const contentOnly = (content: OutboundContent, mentions: ReadonlyArray<string>): AnyMessageContent => {
  const mentioned = mentions.length === 0 ? {} : { mentions: [...mentions] }
  switch (content.type) {
    case "text":
      return { text: content.text, linkPreview: content.linkPreview === undefined ? null : urlInfoOf(content.linkPreview), ...mentioned }
    case "media":
      return mediaMessageOf(content.media, mentions)
    case "location": {
      const { address, latitude, longitude, name, url } = content.location
      return {
        location: {
          degreesLatitude: latitude,
          degreesLongitude: longitude,
          ...(name === null ? {} : { name }),
          ...(address === null ? {} : { address }),
          ...(url === null ? {} : { url })
        }
      }
    }
    case "contacts":
      return {
        contacts: {
          // What chat lists show for the message: the name of the one card, or how many there are.
          displayName: content.contacts.length === 1 ? content.contacts[0]!.name : `${content.contacts.length} contacts`,
          contacts: content.contacts.map(({ name, vcard }) => ({ displayName: name, vcard }))
        }
      }
    case "poll": {
      const { name, options, secret, selectableCount } = content.poll
      // Baileys uses the secret given (else a random one): votes are encrypted with it, so it
      // must be the one the gateway keeps with the poll.
      return { poll: { name, values: [...options], selectableCount, messageSecret: secret } }
    }
  }
}

/**
 * The content of a send. The forwarded flag goes in the message's `contextInfo`, which Baileys
 * merges into whatever it builds (its types allow `contextInfo` on a few kinds only; it applies
 * it to any). Baileys puts it on the first field of the message, which for a poll is its
 * `messageContextInfo`: a forwarded poll loses the flag (WhatsApp's apps do not forward polls).
 */
export const contentOf = (content: OutboundContent, extras: OutboundExtras): AnyMessageContent => {
  const built = contentOnly(content, extras.mentions)
  return extras.forwarded ? { ...built, contextInfo: forwardedContext } as AnyMessageContent : built
}

/**
 * The content a reply carries of the message it quotes (`contextInfo.quotedMessage`), which
 * recipients show above the reply: its text or caption under the field of its kind. The Store
 * keeps no wire copy of messages, and WhatsApp finds the quoted one by its id (`stanzaId`).
 */
const quotedContentOf = ({ text, type }: QuotedMessage): proto.IMessage => {
  const caption = text === null ? {} : { caption: text }
  switch (type) {
    case "image":
    case "video":
    case "document":
      return { [`${type}Message`]: caption }
    case "audio":
      return { audioMessage: {} }
    case "sticker":
      return { stickerMessage: {} }
    case "location":
      return { locationMessage: {} }
    case "contact":
      return { contactMessage: {} }
    case "poll":
      return { pollCreationMessageV3: {} }
    default:
      return { conversation: text ?? "" }
  }
}

/** The message a reply quotes, as Baileys' `sendMessage` takes it (`quoted`): sent or received, by key. */
export const quotedOf = (chatId: string, quoted: QuotedMessage): WAMessage => ({
  key: keyOf(chatId, quoted),
  message: quotedContentOf(quoted)
})
