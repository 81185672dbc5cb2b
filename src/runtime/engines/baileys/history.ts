import { type BaileysEventMap, proto, type SocketConfig } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { HistorySync } from "../../../domain/SessionSettings.js"
import { EngineEvent, type InboundMessage } from "../../Engine.js"
import type { InboundChatChange } from "../../EngineAccount.js"
import { chatChangeOf, chatIdOf } from "./chats.js"
import { noPhoneLookup, type PhoneOfLid } from "./jids.js"
import type { Me } from "./messageActions.js"
import { inboundOf } from "./messages.js"

/**
 * The phone's history sync through Baileys. After linking, the phone sends
 * HISTORY_SYNC_NOTIFICATIONs (INITIAL_BOOTSTRAP, RECENT, PUSH_NAME, and FULL when the client
 * asked for everything); Baileys downloads each blob, and `messaging-history.set` hands over
 * its chats, contacts and messages. An answer to `fetchMessageHistory` comes the same way as
 * ON_DEMAND. The session's `historySync` decides what Baileys processes at all.
 */

const SyncType = proto.HistorySync.HistorySyncType

/**
 * `shouldSyncHistoryMessage` and `syncFullHistory` for a session's `historySync`: `recent` is
 * Baileys' default (everything but FULL), `full` asks the phone for everything, `off` processes
 * only what the API asked for (ON_DEMAND). Baileys warns that with no sync at all it misses the
 * LID mappings the first batches carry; `off` accepts that (they are learnt later from messages).
 */
export const historyOptionsOf = (historySync: HistorySync): Pick<SocketConfig, "shouldSyncHistoryMessage" | "syncFullHistory"> => {
  switch (historySync) {
    case "off":
      return { syncFullHistory: false, shouldSyncHistoryMessage: ({ syncType }) => syncType === SyncType.ON_DEMAND }
    case "recent":
      return { syncFullHistory: false, shouldSyncHistoryMessage: ({ syncType }) => syncType !== SyncType.FULL }
    case "full":
      return { syncFullHistory: true, shouldSyncHistoryMessage: () => true }
  }
}

export interface HistoryContext {
  readonly phoneOfLid: PhoneOfLid
  /** The account, as the author of the messages it sent from the phone. */
  readonly me: Me
}

/** `messaging-history.set` → one `HistoryReceived` batch (none when it carries nothing). */
export const fromHistorySet = (
  history: BaileysEventMap["messaging-history.set"],
  { me, phoneOfLid }: HistoryContext = { phoneOfLid: noPhoneLookup, me: () => undefined }
) =>
  Effect.gen(function*() {
    const chats: Array<InboundChatChange> = []
    for (const chat of history.chats) {
      const chatId = yield* chatIdOf(chat.id, chat.pnJid, phoneOfLid)
      if (chatId !== null) chats.push(chatChangeOf(chatId, { ...chat, name: chat.name ?? chat.displayName ?? null }))
    }
    const messages: Array<InboundMessage> = []
    for (const message of history.messages) {
      const inbound = yield* inboundOf(message, phoneOfLid, me)
      if (inbound !== null) messages.push(inbound)
    }
    const contacts: Array<{ chatId: string; name: string | null }> = []
    for (const contact of history.contacts) {
      const chatId = yield* chatIdOf(contact.id, contact.phoneNumber, phoneOfLid)
      if (chatId !== null) contacts.push({ chatId, name: contact.name ?? contact.notify ?? null })
    }
    if (chats.length === 0 && messages.length === 0 && contacts.length === 0) return []
    return [EngineEvent.HistoryReceived({
      batch: {
        chats,
        messages,
        contacts,
        progress: typeof history.progress === "number" ? history.progress : null,
        onDemand: history.syncType === SyncType.ON_DEMAND
      }
    })]
  })
