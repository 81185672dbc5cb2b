/**
 * Reactions are ordinary Signal messages carrying a `reactionMessage { key, text, senderTimestampMs }`
 * (stanza `<message type=reaction>`, `<enc decrypt-fail=hide>`); `text: ""` removes the reaction.
 *
 * The `key` names the target message from the SENDER's point of view: `fromMe` says whether the
 * sender wrote it, `remoteJid` is the chat as the sender sees it. A receiving Baileys flips it to
 * its own view (Utils/process-message.js `cleanMessage`): for a reaction from someone else,
 * `fromMe: false` becomes "was it mine?" (remoteJid/participant is my PN or LID) and `fromMe: true`
 * becomes false; `remoteJid` is then replaced by the chat the reaction came from.
 */
import type { proto } from "@whiskeysockets/baileys"

/** A reaction a linked client sent to a fake contact. */
export interface ReceivedReaction {
  /** id of the message reacted to */
  readonly targetId: string
  /** the emoji; "" when the reaction was removed */
  readonly emoji: string
  /** the target as the client saw it: `fromMe` true = the client's own message */
  readonly key: proto.IMessageKey
}

/** The reaction in a decrypted message, if it is one. */
export const reactionOf = (message: proto.IMessage): ReceivedReaction | undefined => {
  const reaction = message.reactionMessage
  if (!reaction?.key?.id) return undefined
  return { targetId: reaction.key.id, emoji: reaction.text ?? "", key: reaction.key }
}

/**
 * The `reactionMessage` a contact sends to the chat `chatJid` (the account, as the contact sees
 * it) about message `targetId`; `targetFromMe` is true when the contact itself wrote the target.
 */
export const reactionMessage = (chatJid: string, targetId: string, emoji: string, targetFromMe: boolean): proto.IMessage => ({
  reactionMessage: {
    key: { remoteJid: chatJid, fromMe: targetFromMe, id: targetId },
    text: emoji,
    senderTimestampMs: Date.now()
  }
})
