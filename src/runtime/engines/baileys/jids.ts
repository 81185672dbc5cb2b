import { Effect, Option } from "effect"

/**
 * Chat ids at the Baileys boundary. The API speaks `<digits>@c.us`, `<id>@g.us`,
 * `<id>@newsletter` and `<id>@lid`; WhatsApp's wire speaks `<user>[_agent][:device]@server`
 * with `s.whatsapp.net` for phone numbers. Everything that crosses goes through here.
 */

export const STATUS_BROADCAST = "status@broadcast"

interface WireJid {
  readonly user: string
  readonly server: string
}

/**
 * Splits a wire JID the way Baileys' `jidDecode` does (`user_agent:device@server`), keeping
 * only what identifies the account: the agent and device parts name one of its devices.
 */
const decode = (jid: string): WireJid | null => {
  const at = jid.indexOf("@")
  if (at <= 0) return null
  const user = jid.slice(0, at).split(":")[0]!.split("_")[0]!
  return user === "" ? null : { user, server: jid.slice(at + 1) }
}

/** Status updates ride on a broadcast list that is not a chat: they reach the gateway under this id. */
export const isStatusBroadcast = (jid: string | null | undefined): boolean => jid === STATUS_BROADCAST

/**
 * For `shouldIgnoreJid`: what Baileys need not even decrypt. Status updates are read (the
 * gateway stores and announces them); other `@broadcast` ids have no API form.
 */
export const isIgnoredJid = (jid: string): boolean => jid.endsWith("@broadcast") && !isStatusBroadcast(jid)

/** Phone-number accounts: `s.whatsapp.net` on the wire, `c.us` in older forms, `hosted` for Cloud-API hosted numbers. */
const phoneServers = new Set(["s.whatsapp.net", "c.us", "hosted"])
const lidServers = new Set(["lid", "hosted.lid"])

export const isPhoneJid = (jid: string | null | undefined): boolean => {
  const decoded = jid ? decode(jid) : null
  return decoded !== null && phoneServers.has(decoded.server)
}

export const isLidJid = (jid: string | null | undefined): boolean => {
  const decoded = jid ? decode(jid) : null
  return decoded !== null && lidServers.has(decoded.server)
}

export const isGroupJid = (jid: string | null | undefined): boolean => jid?.endsWith("@g.us") === true

/**
 * Wire → API. Device and agent suffixes are dropped (the API addresses accounts, not devices).
 * Returns null for what has no API form (`status@broadcast`, other broadcasts, calls, bots).
 */
export const toApiId = (jid: string | null | undefined): string | null => {
  const decoded = jid ? decode(jid) : null
  if (decoded === null) return null
  const { user, server } = decoded
  if (phoneServers.has(server)) return `${user}@c.us`
  if (lidServers.has(server)) return `${user}@lid`
  if (server === "g.us" || server === "newsletter") return `${user}@${server}`
  return null
}

/**
 * API → wire. Baileys puts the JID on the stanza as given, so a `c.us` id must become
 * `s.whatsapp.net` here; groups, channels and LIDs pass through unchanged.
 */
export const toWireJid = (chatId: string): string => {
  const decoded = decode(chatId)
  if (decoded === null) return chatId
  const { user, server } = decoded
  return server === "c.us" ? `${user}@s.whatsapp.net` : server === "lid" ? `${user}@lid` : chatId
}

/** The parts of a Baileys `WAMessageKey` that say who wrote a message and where. */
export interface KeyAddressing {
  readonly remoteJid?: string | null | undefined
  readonly remoteJidAlt?: string | null | undefined
  readonly participant?: string | null | undefined
  readonly participantAlt?: string | null | undefined
  /** Older Baileys (6.x) put the phone JID of a LID sender here. */
  readonly senderPn?: string | null | undefined
}

/** Resolves a LID (wire form) to the account's phone JID from Baileys' mapping store, if known. */
export type PhoneOfLid = (lidJid: string) => Effect.Effect<Option.Option<string>>

export const noPhoneLookup: PhoneOfLid = () => Effect.succeed(Option.none())

export interface SenderIds {
  /** The chat in API form: a group's id, else the sender's phone id when known, else its LID. */
  readonly chatId: string
  /** The author in API form (phone id when known, else LID). */
  readonly from: string
  readonly fromPhone: string | null
  readonly fromLid: string | null
}

/**
 * The API ids of an incoming message's chat and author. WhatsApp increasingly addresses
 * people by LID; the phone JID comes in the key's `…Alt` field (or `senderPn`), else from
 * the LID mapping store, and when neither knows it the LID is all we have. A status update is
 * addressed like a group message (its author in `participant`) under `status@broadcast`.
 * Null when the chat has no API form (other broadcasts and the like).
 */
export const senderIdsOf = (key: KeyAddressing, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const remote = key.remoteJid ?? null
    if (remote === null) return null
    const isStatus = isStatusBroadcast(remote)
    const inGroup = isGroupJid(remote) || isStatus
    const author = inGroup ? key.participant ?? null : remote
    // Baileys puts a status author's other id in `remoteJidAlt` (it is no group to Baileys)
    const alt = (isStatus ? key.participantAlt ?? key.remoteJidAlt : inGroup ? key.participantAlt : key.remoteJidAlt) ?? key.senderPn ?? null
    if (author === null) return null

    let phone = isPhoneJid(author) ? toApiId(author) : isPhoneJid(alt) ? toApiId(alt) : null
    const lid = isLidJid(author) ? toApiId(author) : isLidJid(alt) ? toApiId(alt) : null
    if (phone === null && lid !== null && isLidJid(author)) {
      phone = Option.getOrNull(Option.flatMapNullable(yield* phoneOfLid(author), toApiId))
    }
    const from = phone ?? lid ?? toApiId(author)
    const chatId = isStatus ? STATUS_BROADCAST : inGroup ? toApiId(remote) : from
    if (from === null || chatId === null) return null
    return { chatId, from, fromPhone: phone, fromLid: lid } satisfies SenderIds
  })

/**
 * A person's API id from what WhatsApp says of them: a JID (phone or LID) and, when it gives
 * one, the other form. The phone id when known (given, or from the LID mapping), else the LID.
 * Null when neither names a person.
 */
export const personIdOf = (jid: string | null | undefined, alt: string | null | undefined, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const phone = isPhoneJid(jid) ? jid : isPhoneJid(alt) ? alt : null
    if (phone !== null) return toApiId(phone)
    const lid = isLidJid(jid) ? jid! : isLidJid(alt) ? alt! : null
    if (lid === null) return null
    const mapped = yield* phoneOfLid(lid)
    return Option.getOrNull(Option.flatMapNullable(mapped, toApiId)) ?? toApiId(lid)
  })

/** Whether two JIDs name the same account (devices and servers aside: compares the users). */
export const sameUser = (a: string | null | undefined, b: string | null | undefined): boolean => {
  const left = a ? decode(a) : null
  const right = b ? decode(b) : null
  return left !== null && right !== null && left.user === right.user
}

/**
 * The ids of a message the account itself wrote (on its phone, as history sync brings them):
 * the chat it went to, and the account as its author. Null when either has no API form.
 */
export const ownIdsOf = (key: KeyAddressing, me: { readonly id?: string | undefined; readonly lid?: string | undefined } | undefined, phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    const remote = key.remoteJid ?? null
    const fromPhone = toApiId(me?.id)
    const fromLid = toApiId(me?.lid)
    const from = fromPhone ?? fromLid
    if (remote === null || from === null) return null
    const chatId = isStatusBroadcast(remote)
      ? STATUS_BROADCAST
      : isGroupJid(remote) ? toApiId(remote) : yield* personIdOf(remote, key.remoteJidAlt, phoneOfLid)
    if (chatId === null) return null
    return { chatId, from, fromPhone, fromLid } satisfies SenderIds
  })
