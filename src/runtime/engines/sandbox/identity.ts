import { createHash, randomBytes } from "node:crypto"
import { randomFromPool } from "../../../domain/uuidv7.js"
import { Effect } from "effect"
import type { Me } from "../../../domain/Session.js"

/**
 * Identities and tokens of the simulated network. Phones and lids are pure functions of the
 * session id, so a sandbox session keeps its number across restarts and processes; only
 * one-off tokens (message ids, QR refs, pairing codes) are random.
 */

/** 999 is an unassigned country calling code: a sandbox number can never reach a real phone. */
const sandboxCountryCode = "999"

/** Numbers starting with this belong to no sandbox session and answer every message. */
export const echoPrefix = "1555000"

const digestNumber = (label: string, sessionId: string): bigint =>
  BigInt("0x" + createHash("sha256").update(`${label}:${sessionId}`).digest("hex").slice(0, 16))

/**
 * The identities worked out so far: the network asks for a session's phone on every send, and
 * for its whole identity each time it connects (two sha256 digests and BigInt arithmetic).
 */
const identities = new Map<string, Me>()

/** `"999"` + 9 digits derived from sha256(sessionId). */
export const sandboxPhoneOf = (sessionId: string): string => sandboxMeOf(sessionId).phone

/** A 14-digit lid: WhatsApp's privacy id is unrelated to the phone number, so it is derived apart. */
const sandboxLidOf = (sessionId: string): string =>
  (10_000_000_000_000n + (digestNumber("lid", sessionId) % 90_000_000_000_000n)).toString()

/** The session's identity on the sandbox network, with the name it has until it chooses one. */
export const sandboxMeOf = (sessionId: string): Me => {
  let me = identities.get(sessionId)
  if (me === undefined) {
    const phone = sandboxCountryCode + (digestNumber("phone", sessionId) % 1_000_000_000n).toString().padStart(9, "0")
    me = { id: `${phone}@c.us`, phone, lid: `${sandboxLidOf(sessionId)}@lid`, pushName: `Sandbox ${phone.slice(-4)}` }
    if (identities.size >= 100_000) identities.clear()
    identities.set(sessionId, me)
  }
  return me
}

export const isEchoPhone = (phone: string): boolean => phone.startsWith(echoPrefix)

/**
 * Shaped like WhatsApp's own ids: a fixed prefix and uppercase hex ("SB" + 20 hex digits). The
 * first 12 digits are the time in milliseconds and the other 8 random, so an id made later
 * sorts later: the Store's indexes on engine ids (the messages', the network's ledger) take each
 * new one at their end, where random ids dirtied a page of their own apiece.
 */
export const newSandboxMessageId = (): string =>
  "SB" + Date.now().toString(16).padStart(12, "0").toUpperCase() + randomFromPool(4).toString("hex").toUpperCase()

export const newQrRef: Effect.Effect<string> = Effect.sync(() => randomBytes(12).toString("base64url"))

const pairingAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"

/** `XXXX-XXXX` of uppercase letters and digits, the shape WhatsApp shows for linking by number. */
export const newPairingCode: Effect.Effect<string> = Effect.sync(() => {
  const chars = Array.from(randomBytes(8), (byte) => pairingAlphabet[byte % pairingAlphabet.length]!)
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`
})

/** WhatsApp's newer group and channel ids start like this; 11 random digits follow. */
const directoryIdPrefix = "1203630"

const newDirectoryNumber = (): string =>
  directoryIdPrefix + (randomBytes(8).readBigUInt64BE() % 100_000_000_000n).toString().padStart(11, "0")

export const newGroupId: Effect.Effect<string> = Effect.sync(() => `${newDirectoryNumber()}@g.us`)

export const newChannelId: Effect.Effect<string> = Effect.sync(() => `${newDirectoryNumber()}@newsletter`)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** 22 base62 characters, the shape of a chat.whatsapp.com invite code. */
export const newInviteCode: Effect.Effect<string> = Effect.sync(() =>
  Array.from(randomBytes(22), (byte) => base62[byte % base62.length]!).join("")
)
