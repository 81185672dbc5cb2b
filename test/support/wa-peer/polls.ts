/**
 * Polls as WhatsApp builds them. A poll (`pollCreationMessageV3` for one choice,
 * `pollCreationMessage` for several) travels with a random 32-byte `messageContextInfo.messageSecret`;
 * each vote is a `pollUpdateMessage { pollCreationMessageKey, vote: { encPayload, encIv } }` whose
 * payload is a `PollVoteMessage { selectedOptions: [SHA-256(option text)] }` sealed with a key
 * only the chat's members can derive from that secret (the inverse of Baileys' `decryptPollVote`):
 *
 *   key0 = HMAC-SHA256(key = 32 zero bytes, messageSecret)
 *   key  = HMAC-SHA256(key = key0, pollMsgId ‖ pollCreatorJid ‖ voterJid ‖ "Poll Vote" ‖ 0x01)
 *   encPayload = AES-256-GCM(key, encIv (12 bytes), aad = `${pollMsgId}\0${voterJid}`) ‖ tag
 *
 * Which JIDs go in is the addressing of the chat: WhatsApp Web authors votes in a LID-addressed
 * chat (the peer's contacts write from their LID) under the creator's and voter's LIDs, without
 * device; older PN chats use phone JIDs. Readers try both, as WhatsApp Web does.
 * This is written from the formula, not with Baileys' code, so that Baileys checks it.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto"
import { proto } from "@whiskeysockets/baileys"

/** The poll JIDs of one side: `<lid>@lid` and `<phone>@s.whatsapp.net`, no device. */
export interface PollParty {
  readonly lid: string
  readonly pn: string
}
export type Addressing = "lid" | "pn"

export interface PollContext {
  readonly pollId: string
  readonly secret: Uint8Array
  readonly creatorJid: string
  readonly voterJid: string
}

/** What a poll option is known by in a vote: the SHA-256 of its text. */
export const optionHash = (name: string): Buffer => createHash("sha256").update(Buffer.from(name)).digest()

const voteKey = ({ pollId, secret, creatorJid, voterJid }: PollContext): Buffer => {
  const key0 = createHmac("sha256", Buffer.alloc(32)).update(secret).digest()
  const info = Buffer.concat([Buffer.from(pollId), Buffer.from(creatorJid), Buffer.from(voterJid), Buffer.from("Poll Vote"), Buffer.from([1])])
  return createHmac("sha256", key0).update(info).digest()
}

const aad = ({ pollId, voterJid }: PollContext): Buffer => Buffer.from(`${pollId}\u0000${voterJid}`)

/** Seal a vote for `options` (their texts; [] withdraws the vote). */
export const encryptPollVote = (options: readonly string[], context: PollContext): { encPayload: Buffer; encIv: Buffer } => {
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: options.map(optionHash) }).finish()
  const encIv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", voteKey(context), encIv).setAAD(aad(context))
  const encPayload = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()])
  return { encPayload, encIv }
}

/** Open a vote: the selected option hashes, or throws when the key or AAD do not match. */
export const decryptPollVote = (vote: proto.Message.IPollEncValue, context: PollContext): Buffer[] => {
  if (!vote.encPayload || !vote.encIv) throw new Error("poll vote without encPayload / encIv")
  const sealed = Buffer.from(vote.encPayload)
  const decipher = createDecipheriv("aes-256-gcm", voteKey(context), Buffer.from(vote.encIv)).setAAD(aad(context))
  decipher.setAuthTag(sealed.subarray(-16))
  const plain = Buffer.concat([decipher.update(sealed.subarray(0, -16)), decipher.final()])
  return proto.Message.PollVoteMessage.decode(plain).selectedOptions.map(hash => Buffer.from(hash))
}

/** A vote read back: the options chosen (by text) and the addressing it was sealed under. */
export interface OpenedVote {
  readonly options: string[]
  /** hashes that match none of the poll's options */
  readonly unknown: number
  readonly creator: Addressing
  readonly voter: Addressing
}

/** Try the LID and PN forms of both JIDs (homogeneous pairs first) and name the options chosen. */
export const openPollVote = (
  vote: proto.Message.IPollEncValue,
  poll: { readonly id: string; readonly secret: Uint8Array; readonly options: readonly string[] },
  creator: PollParty,
  voter: PollParty
): OpenedVote => {
  const attempts: Array<[Addressing, Addressing]> = [["lid", "lid"], ["pn", "pn"], ["lid", "pn"], ["pn", "lid"]]
  for (const [creatorForm, voterForm] of attempts) {
    let hashes: Buffer[]
    try {
      hashes = decryptPollVote(vote, { pollId: poll.id, secret: poll.secret, creatorJid: creator[creatorForm], voterJid: voter[voterForm] })
    } catch {
      continue
    }
    const byHash = new Map(poll.options.map(name => [optionHash(name).toString("hex"), name]))
    const options = hashes.flatMap(hash => byHash.get(hash.toString("hex")) ?? [])
    return { options, unknown: hashes.length - options.length, creator: creatorForm, voter: voterForm }
  }
  throw new Error(`the vote on poll ${poll.id} opens under none of the LID / PN forms of ${creator.pn} and ${voter.pn}`)
}

/** The poll a message creates, if it is one: its name, option texts, how many may be chosen, secret. */
export const pollOf = (
  message: proto.IMessage
): { name: string; options: string[]; selectableCount: number; secret: Uint8Array | undefined } | undefined => {
  const creation = message.pollCreationMessageV3 ?? message.pollCreationMessage ?? message.pollCreationMessageV2
  if (!creation) return undefined
  return {
    name: creation.name ?? "",
    options: (creation.options ?? []).map(option => option.optionName ?? ""),
    selectableCount: creation.selectableOptionsCount ?? 0,
    secret: message.messageContextInfo?.messageSecret ?? undefined
  }
}

/** A poll as a phone creates it: V3 when one option may be chosen, V1 otherwise, with its secret. */
export const pollCreationMessage = (poll: {
  readonly name: string
  readonly options: readonly string[]
  /** 1 (the default) … options.length; 0 = any number */
  readonly selectableCount?: number
  readonly secret?: Uint8Array
}): { message: proto.IMessage; secret: Buffer } => {
  const secret = Buffer.from(poll.secret ?? randomBytes(32))
  const selectableOptionsCount = poll.selectableCount ?? 1
  const creation = { name: poll.name, options: poll.options.map(optionName => ({ optionName })), selectableOptionsCount }
  const message: proto.IMessage =
    selectableOptionsCount === 1
      ? { pollCreationMessageV3: creation, messageContextInfo: { messageSecret: secret } }
      : { pollCreationMessage: creation, messageContextInfo: { messageSecret: secret } }
  return { message, secret }
}
