import { aesEncryptGCM, decryptPollVote, hmacSign, proto, sha256 } from "@whiskeysockets/baileys"
import { randomBytes } from "node:crypto"

/**
 * Poll votes are end-to-end encrypted a second time, with the poll's secret (the creation
 * message's `messageContextInfo.messageSecret`), so only those who saw the poll can read them.
 * A vote (`pollUpdateMessage.vote`) is a `PollVoteMessage` (the SHA-256 of each chosen option's
 * text) under AES-256-GCM, with a key derived by HMAC-SHA256 from the secret and who is who:
 *   key0 = HMAC(key: 32 zero bytes, data: secret)
 *   key  = HMAC(key: key0, data: pollId ‖ creatorJid ‖ voterJid ‖ "Poll Vote" ‖ 0x01)
 *   aad  = pollId ‖ 0x00 ‖ voterJid
 * Baileys ships the decryption (`decryptPollVote`) but not the encryption, which mirrors it here.
 * The JIDs are plain user JIDs (no device), as the voter's client named them.
 */

const POLL_VOTE = "Poll Vote"

/** How WhatsApp names a poll option inside a vote. */
export const optionHashOf = (option: string): Buffer => sha256(Buffer.from(option, "utf8"))

export interface VoteParties {
  readonly pollId: string
  readonly creatorJid: string
  readonly voterJid: string
}

const voteKeyOf = (secret: Uint8Array, { creatorJid, pollId, voterJid }: VoteParties) => {
  const key0 = hmacSign(secret, new Uint8Array(32), "sha256")
  const sign = Buffer.concat([Buffer.from(pollId), Buffer.from(creatorJid), Buffer.from(voterJid), Buffer.from(POLL_VOTE), new Uint8Array([1])])
  return hmacSign(sign, key0, "sha256")
}

const aadOf = ({ pollId, voterJid }: VoteParties) => Buffer.from(`${pollId}\u0000${voterJid}`)

/** The `vote` of a `pollUpdateMessage` choosing `options` (texts; none withdraws the vote). */
export const encryptPollVote = (
  secret: Uint8Array,
  parties: VoteParties,
  options: ReadonlyArray<string>
): proto.Message.IPollEncValue => {
  const plaintext = proto.Message.PollVoteMessage.encode({ selectedOptions: options.map(optionHashOf) }).finish()
  const encIv = randomBytes(12)
  return { encPayload: aesEncryptGCM(plaintext, voteKeyOf(secret, parties), encIv, aadOf(parties)), encIv }
}

/**
 * The options a vote chose, by their texts; null when it decrypts under none of the candidate
 * namings of creator and voter (WhatsApp names each by phone or by LID depending on how the
 * chat is addressed; a wrong guess fails the GCM tag, so trying is safe). Hashes matching no
 * option of the poll are left out.
 */
export const decryptPollVoteOptions = (
  vote: proto.Message.IPollEncValue,
  poll: { readonly secret: Uint8Array; readonly options: ReadonlyArray<string> },
  pollId: string,
  creatorJids: ReadonlyArray<string>,
  voterJids: ReadonlyArray<string>
): ReadonlyArray<string> | null => {
  if (vote.encPayload == null || vote.encIv == null) return null
  for (const creatorJid of creatorJids) {
    for (const voterJid of voterJids) {
      let decrypted: proto.Message.PollVoteMessage
      try {
        decrypted = decryptPollVote(
          { encPayload: vote.encPayload, encIv: vote.encIv },
          { pollCreatorJid: creatorJid, pollMsgId: pollId, pollEncKey: poll.secret, voterJid }
        )
      } catch {
        continue
      }
      const chosen = new Set(decrypted.selectedOptions.map((hash) => Buffer.from(hash).toString("hex")))
      return poll.options.filter((option) => chosen.has(optionHashOf(option).toString("hex")))
    }
  }
  return null
}
