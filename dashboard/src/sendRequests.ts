/**
 * The message tester's form as the request the API takes: the send endpoint, and its body typed
 * by the server's schemas (model.ts). Kept free of the browser's globals and of the page, so the
 * contract test (test/dashboard-contract.test.ts) can decode what it builds with those schemas.
 *
 * Imports carry `.js` so this file also type-checks in the server's own (NodeNext) test build.
 */
import type {
  ContactInput, MediaKind, SendContactRequest, SendLocationRequest, SendMediaRequest, SendPollRequest,
  SendTextRequest, TypingMs
} from "./model.js"

export type SendKind = "text" | "location" | "contact" | "poll" | MediaKind

export const MAX_CONTACTS = 20
export const MIN_POLL_OPTIONS = 2
export const MAX_POLL_OPTIONS = 12

export interface ContactRow {
  readonly name: string
  readonly phone: string
  readonly organization: string
  readonly email: string
}

export type MediaChoice =
  | { readonly from: "file"; readonly file: File | null }
  | { readonly from: "url"; readonly url: string }

/** What the tester's form holds, as typed (numbers still text): one part per kind of send. */
export interface SendDraft {
  readonly kind: SendKind
  readonly chatId: string
  /** A text's text, or a media's caption. */
  readonly text: string
  readonly linkPreview: boolean
  /** How long to show "typing…" first: "" (not at all), milliseconds, or "auto". */
  readonly typing: string
  readonly media: MediaChoice
  readonly ptt: boolean
  readonly location: { readonly latitude: string; readonly longitude: string; readonly name: string; readonly address: string }
  readonly contacts: ReadonlyArray<ContactRow>
  readonly poll: { readonly name: string; readonly options: ReadonlyArray<string>; readonly selectableCount: number }
}

export const emptyContact: ContactRow = { name: "", phone: "", organization: "", email: "" }

export const emptyDraft: SendDraft = {
  kind: "text",
  chatId: "",
  text: "",
  linkPreview: true,
  typing: "",
  media: { from: "file", file: null },
  ptt: false,
  location: { latitude: "", longitude: "", name: "", address: "" },
  contacts: [emptyContact],
  poll: { name: "", options: ["", ""], selectableCount: 1 }
}

/** One send: a JSON body, or (a media file) multipart fields beside the file. */
export type SendRequest =
  | { readonly endpoint: "send-text"; readonly json: SendTextRequest }
  | { readonly endpoint: "send-location"; readonly json: SendLocationRequest }
  | { readonly endpoint: "send-contact"; readonly json: SendContactRequest }
  | { readonly endpoint: "send-poll"; readonly json: SendPollRequest }
  | { readonly endpoint: `send-${MediaKind}`; readonly json: SendMediaRequest }
  | { readonly endpoint: `send-${MediaKind}`; readonly fields: Readonly<Record<string, string>>; readonly file: File }

/** A form the tester cannot turn into a request (the API would refuse it less clearly). */
export class DraftError extends Error {
  override readonly name = "DraftError"
}

export const typingOf = (typing: string): TypingMs | undefined => {
  const value = typing.trim()
  if (value === "") return undefined
  if (value === "auto") return "auto"
  if (/^\d+$/.test(value)) return Number(value)
  throw new DraftError("typing is a number of milliseconds (0 to 30000) or \"auto\"")
}

const coordinate = (label: string, value: string) => {
  const number = Number(value.trim())
  if (value.trim() === "" || !Number.isFinite(number)) throw new DraftError(`${label} must be a number`)
  return number
}

/** `{key: value}` when the field was filled in, `{}` when left blank: optional fields are left out, not sent empty. */
const ifFilled = <K extends string>(key: K, value: string): { readonly [P in K]?: string } =>
  (value.trim() === "" ? {} : { [key]: value.trim() }) as { readonly [P in K]?: string }

const contactOf = (row: ContactRow): ContactInput => ({
  name: row.name.trim(),
  phone: row.phone.trim(),
  ...ifFilled("organization", row.organization),
  ...ifFilled("email", row.email)
})

/** The request the draft stands for; a DraftError when it cannot be one. */
export const requestOf = (draft: SendDraft): SendRequest => {
  const chatId = draft.chatId.trim()
  const typingMs = typingOf(draft.typing)
  const options = typingMs === undefined ? {} : { typingMs }
  switch (draft.kind) {
    case "text":
      return { endpoint: "send-text", json: { chatId, text: draft.text, linkPreview: draft.linkPreview, ...options } }
    case "location":
      return {
        endpoint: "send-location",
        json: {
          chatId,
          latitude: coordinate("latitude", draft.location.latitude),
          longitude: coordinate("longitude", draft.location.longitude),
          ...ifFilled("name", draft.location.name),
          ...ifFilled("address", draft.location.address),
          ...options
        }
      }
    case "contact":
      return { endpoint: "send-contact", json: { chatId, contacts: draft.contacts.map(contactOf), ...options } }
    case "poll":
      return {
        endpoint: "send-poll",
        json: {
          chatId,
          name: draft.poll.name.trim(),
          options: draft.poll.options.map((option) => option.trim()),
          selectableCount: draft.poll.selectableCount,
          ...options
        }
      }
    default:
      return mediaRequestOf(draft.kind, chatId, draft, typingMs)
  }
}

const mediaRequestOf = (kind: MediaKind, chatId: string, draft: SendDraft, typingMs: TypingMs | undefined): SendRequest => {
  const endpoint = `send-${kind}` as const
  // Stickers carry no caption.
  const caption = kind === "sticker" || draft.text.trim() === "" ? undefined : draft.text
  const ptt = kind === "audio" && draft.ptt
  if (draft.media.from === "url") {
    const url = draft.media.url.trim()
    if (url === "") throw new DraftError("give the media's URL")
    return {
      endpoint,
      json: {
        chatId,
        media: { url },
        ...(caption === undefined ? {} : { caption }),
        ...(ptt ? { ptt } : {}),
        ...(typingMs === undefined ? {} : { typingMs })
      }
    }
  }
  if (draft.media.file === null) throw new DraftError("choose a file to send")
  // Multipart fields are text: the server reads `ptt` as "true" and `typingMs` as digits or "auto".
  return {
    endpoint,
    file: draft.media.file,
    fields: {
      chatId,
      ...(caption === undefined ? {} : { caption }),
      ...(ptt ? { ptt: "true" } : {}),
      ...(typingMs === undefined ? {} : { typingMs: String(typingMs) })
    }
  }
}
