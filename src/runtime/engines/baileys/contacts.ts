import { type BaileysEventMap, type Contact, USyncQuery, USyncUser, type WASocket } from "@whiskeysockets/baileys"
import { Effect, Option } from "effect"
import type { ContactCheck } from "../../../domain/Contact.js"
import { EngineEvent } from "../../Engine.js"
import type { ContactOperations, ContactSeen } from "../../EngineDirectory.js"
import { engineErrorOf } from "./disconnect.js"
import { isLidJid, isPhoneJid, noPhoneLookup, type PhoneOfLid, sameUser, toApiId } from "./jids.js"

/**
 * Contacts through Baileys: number checks, and the people the connection learns about.
 *
 * A check is the usync query `onWhatsApp` sends (contact protocol: `<contact type=in|out>`),
 * with the LID protocol added so the answer carries each account's LID as well; when it does
 * not, the LID mapping store is asked. WhatsApp answers with the account's canonical JID, which
 * may differ from the number asked (a country's old numbering): that JID is the chat id.
 *
 * People are reported (`ContactsSeen`) from `contacts.upsert` / `contacts.update` (address book
 * and push names), `lid-mapping.update` (WhatsApp telling a LID's phone number) and the members
 * of groups the connection reads.
 */

export interface ContactSocket {
  readonly executeUSyncQuery: WASocket["executeUSyncQuery"]
  readonly signalRepository: {
    readonly lidMapping: Pick<WASocket["signalRepository"]["lidMapping"], "getLIDForPN" | "storeLIDPNMappings">
  }
}

const pnJidOf = (digits: string) => `${digits}@s.whatsapp.net`

export const makeContactOperations = (sock: ContactSocket): ContactOperations => ({
  check: (phones) =>
    Effect.gen(function*() {
      if (phones.length === 0) return []
      const query = new USyncQuery().withContactProtocol().withLIDProtocol()
      for (const phone of phones) query.withUser(new USyncUser().withPhone(`+${phone}`))
      const result = yield* Effect.tryPromise({ try: () => sock.executeUSyncQuery(query), catch: (error) => engineErrorOf("CONTACT_CHECK", error) })
      const list = result?.list ?? []
      return yield* Effect.forEach(phones, (phone, index) =>
        Effect.gen(function*() {
          // the answer names the account; when it names another number, it is the same user in order
          const entry = list.find((item) => sameUser(item.id, pnJidOf(phone))) ?? (list.length === phones.length ? list[index] : undefined)
          const exists = entry?.["contact"] === true
          if (!exists || entry === undefined) return { number: phone, exists: false, chatId: null, lid: null } satisfies ContactCheck
          const answered = typeof entry["lid"] === "string" && isLidJid(entry["lid"]) ? entry["lid"] : null
          const mapping = sock.signalRepository.lidMapping
          // kept for later sends, as Baileys keeps what its own usync queries tell
          if (answered !== null) yield* Effect.promise(() => mapping.storeLIDPNMappings([{ lid: answered, pn: entry.id }]).catch(() => undefined))
          const lid = answered ?? (yield* Effect.promise(() => mapping.getLIDForPN(entry.id).catch(() => null)))
          return { number: phone, exists: true, chatId: toApiId(entry.id), lid: toApiId(lid) } satisfies ContactCheck
        }))
    })
})

/** A person as Baileys describes them → both API ids as far as known, and a name. Null for non-persons. */
export const contactSeenOf = (contact: Partial<Contact>, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const ids = [contact.id, contact.phoneNumber, contact.lid]
    const lidJid = ids.find(isLidJid) ?? null
    let phoneJid = ids.find(isPhoneJid) ?? null
    if (phoneJid === null && lidJid !== null) phoneJid = Option.getOrNull(yield* phoneOfLid(lidJid))
    if (phoneJid === null && lidJid === null) return null
    const name = contact.name || contact.notify || contact.verifiedName || null
    return { phone: toApiId(phoneJid), lid: toApiId(lidJid), name } satisfies ContactSeen
  })

const seen = (contacts: ReadonlyArray<ContactSeen | null>): Array<EngineEvent> => {
  const known = contacts.filter((contact): contact is ContactSeen => contact !== null)
  return known.length === 0 ? [] : [EngineEvent.ContactsSeen({ contacts: known })]
}

/** `contacts.upsert` / `contacts.update`. */
export const fromContacts = (contacts: ReadonlyArray<Partial<Contact>>, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.map(Effect.forEach(contacts, (contact) => contactSeenOf(contact, phoneOfLid)), seen)

/** `lid-mapping.update`, and the LID ↔ phone pairs of group members: people with both ids. */
export const fromLidPairs = (pairs: ReadonlyArray<BaileysEventMap["lid-mapping.update"]>): Array<EngineEvent> =>
  seen(pairs.map(({ lid, pn }) => (isLidJid(lid) && isPhoneJid(pn) ? { phone: toApiId(pn), lid: toApiId(lid), name: null } : null)))
