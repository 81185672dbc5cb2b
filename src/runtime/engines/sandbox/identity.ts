import { createHash, randomBytes } from "node:crypto"
import { randomFromPool } from "../../../domain/uuidv7.js"
import { Effect } from "effect"
import type { Me } from "../../../domain/Session.js"

/**
 * Identities and tokens of the simulated network. Phones and lids are pure functions of the
 * session id, so a sandbox session keeps its number across restarts and processes; one-off
 * tokens (QR refs, pairing codes) are random, and message ids partly (the rest is the time).
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

/** The sandbox's ids count milliseconds from here: 40 bits of them last until 2059. */
const idEpochMillis = Date.UTC(2025, 0, 1)
const idPartLimit = 2 ** 40
const hex10 = (value: number) => value.toString(16).padStart(10, "0").toUpperCase()

// The last id's two parts: within one millisecond the next id counts on from the last, so this
// process never makes the same id twice and its ids sort in the order they were made.
let lastIdMillis = -1
let lastIdRandom = 0

/**
 * Shaped like WhatsApp's own ids: a fixed prefix and uppercase hex ("SB" + 20 hex digits). The
 * first 10 digits are milliseconds since 2025, the other 10 random (40 bits, counting on within
 * a millisecond), so the Store's indexes on engine ids (the messages', the network's ledger)
 * take each new id at their end, where fully random ids dirtied a page of their own apiece.
 * Ids of different processes (a cluster's runners) differ by their random part; a clock set back,
 * or the time part wrapping after 2059, only costs the order.
 */
export const newSandboxMessageId = (): string => {
  const millis = (Date.now() - idEpochMillis) % idPartLimit
  const random = millis === lastIdMillis
    ? (lastIdRandom + 1) % idPartLimit
    : randomFromPool(5).readUIntBE(0, 5)
  lastIdMillis = millis
  lastIdRandom = random
  return "SB" + hex10(millis) + hex10(random)
}

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
