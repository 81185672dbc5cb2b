import type { ContactCard, ContactInput } from "./Message.js"

/**
 * Contact cards travel as vCard 3.0 text (RFC 2426). WhatsApp reads the phone from the `TEL`
 * line's `waid` parameter (the number in digits) to offer "message" and "add" on the card.
 */

/** Backslash, comma, semicolon and line breaks are escaped in vCard values. */
const escape = (value: string) => value.replace(/[\\,;]/g, (c) => `\\${c}`).replace(/\r?\n/g, "\\n")
const unescape = (value: string) => value.replace(/\\n/gi, "\n").replace(/\\([\\,;])/g, "$1")

const digitsOf = (phone: string) => phone.replace(/\D/g, "")

/** The vCard of one contact, as WhatsApp's apps write it. */
export const buildVcard = (contact: ContactInput): string => {
  const digits = digitsOf(contact.phone)
  return [
    "BEGIN:VCARD",
    "VERSION:3.0",
    `FN:${escape(contact.name)}`,
    ...(contact.organization === undefined ? [] : [`ORG:${escape(contact.organization)}`]),
    ...(contact.email === undefined ? [] : [`EMAIL;type=INTERNET:${escape(contact.email)}`]),
    `TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`,
    "END:VCARD"
  ].join("\n")
}

export const cardOf = (contact: ContactInput): ContactCard => ({
  name: contact.name,
  phone: `+${digitsOf(contact.phone)}`,
  organization: contact.organization ?? null,
  email: contact.email ?? null,
  vcard: buildVcard(contact)
})

/** The value of the first line of a property (`FN`, `TEL;…`), unfolded and unescaped. */
const property = (lines: ReadonlyArray<string>, name: string) => {
  const line = lines.find((line) => {
    const key = line.slice(0, line.indexOf(":")).split(";")[0]!.toUpperCase()
    return key === name || key.endsWith(`.${name}`)
  })
  return line === undefined ? null : { params: line.slice(0, line.indexOf(":")), value: unescape(line.slice(line.indexOf(":") + 1)).trim() }
}

/**
 * What a received card says. A card from another app may lack any field; `displayName` (what
 * the message itself names the card) stands in for a missing `FN`.
 */
export const parseVcard = (vcard: string, displayName: string | null): ContactCard => {
  // Folded lines (RFC 2425 §5.8.1) continue with a space or a tab.
  const lines = vcard.replace(/\r?\n[ \t]/g, "").split(/\r?\n/)
  const tel = property(lines, "TEL")
  const waid = tel === null ? undefined : /waid=(\d+)/i.exec(tel.params)?.[1]
  const telDigits = tel === null ? "" : digitsOf(tel.value)
  const phone = waid !== undefined ? `+${waid}` : telDigits === "" ? null : `+${telDigits}`
  const organization = property(lines, "ORG")?.value.replace(/;+$/, "") ?? null
  return {
    name: property(lines, "FN")?.value ?? displayName ?? phone ?? "",
    phone,
    organization: organization === "" ? null : organization,
    email: property(lines, "EMAIL")?.value ?? null,
    vcard
  }
}
