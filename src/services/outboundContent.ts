import { randomBytes } from "node:crypto"
import type { SendContactRequest, SendLocationRequest, SendPollRequest, TypingMs } from "../domain/Message.js"
import { cardOf } from "../domain/vcard.js"
import type { OutboundContentFields } from "../runtime/OutboundRow.js"
import type { SendOptions } from "../runtime/ports/store/MessageRepo.js"

export type { OutboundContentFields } from "../runtime/OutboundRow.js"

/** The content of each kind of send, as its row will hold it. */

/** Who a send goes to, what it quotes or mentions, and how it goes out: the same for every kind of message. */
export interface OutboundAddressing {
  readonly chatId: string
  readonly quotedMessageId?: string | undefined
  readonly mentions?: ReadonlyArray<string> | undefined
  readonly typingMs?: TypingMs | undefined
  readonly linkPreview?: boolean | undefined
  /** Status updates only (`status@broadcast`): who may see it, and a text's look. */
  readonly statusAudience?: ReadonlyArray<string> | undefined
  readonly statusStyle?: SendOptions["statusStyle"]
}

/** Kept on the row only when the caller asked for something other than the defaults. */
export const sendOptionsOf = ({ linkPreview, statusAudience, statusStyle, typingMs }: OutboundAddressing): SendOptions | null => {
  const options = { typingMs, linkPreview, statusAudience, statusStyle }
  return Object.values(options).every((value) => value === undefined) ? null : options
}

export const locationContent = (request: Omit<SendLocationRequest, "chatId">): OutboundContentFields => ({
  type: "location",
  text: null,
  caption: null,
  media: null,
  extras: {
    location: {
      latitude: request.latitude,
      longitude: request.longitude,
      name: request.name ?? null,
      address: request.address ?? null,
      url: request.url ?? null
    }
  }
})

export const contactContent = (request: Pick<SendContactRequest, "contacts">): OutboundContentFields => ({
  type: "contact",
  text: null,
  caption: null,
  media: null,
  extras: { contacts: request.contacts.map(cardOf) }
})

/** The poll's secret is chosen now and kept: votes are encrypted with it, and a resend must be the same poll. */
export const pollContent = (request: Pick<SendPollRequest, "name" | "options" | "selectableCount">): OutboundContentFields => ({
  type: "poll",
  text: null,
  caption: null,
  media: null,
  extras: {
    poll: {
      name: request.name,
      options: request.options,
      selectableCount: request.selectableCount ?? 1,
      secret: randomBytes(32).toString("base64")
    }
  }
})

export const textContent = (text: string): OutboundContentFields => ({ type: "text", text, caption: null, media: null })
