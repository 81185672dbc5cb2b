/**
 * The phone's history sync, as Baileys reads it (Utils/history.js): a
 * `protocolMessage { type: HISTORY_SYNC_NOTIFICATION, historySyncNotification }` from the
 * account's own phone, whose `HistorySync` blob (zlib-deflated protobuf: `syncType`,
 * `conversations` with their `messages`, `progress`) travels inline in
 * `initialHistBootstrapInlinePayload` — Baileys reads it from there whatever the sync type,
 * instead of downloading an `md-msg-hist` upload.
 *
 * On-demand history: the client asks its own phone (a `protocolMessage` PEER_DATA_OPERATION_REQUEST_MESSAGE
 * with `historySyncOnDemandRequest { chatJid, oldestMsgId, oldestMsgFromMe, oldestMsgTimestampMs,
 * onDemandMsgCount }`); the phone answers with an ON_DEMAND sync of that many messages of the
 * chat older than the one named, from what the test gave it (`peer.phoneHistory`).
 */
import { deflateSync } from "node:zlib"
import { proto } from "@whiskeysockets/baileys"
import { contentOf } from "./kinds.js"

/** A message as the phone keeps it. */
export interface PhoneMessage {
  readonly id: string
  /** written on the account's phone (true) or by the other side */
  readonly fromMe: boolean
  readonly text: string
  /** unix seconds */
  readonly at: number
  /** in a group, the author's JID when not the account */
  readonly participant?: string
}

/** A chat as the phone keeps it: what its list shows, and its messages (any order). */
export interface PhoneChat {
  /** `<phone>@s.whatsapp.net`, `<lid>@lid` or `<id>@g.us` */
  readonly jid: string
  readonly name?: string
  readonly unreadCount?: number
  readonly archived?: boolean
  readonly pinned?: boolean
  /** ms since the epoch; -1 forever */
  readonly mutedUntilMs?: number
  readonly messages: readonly PhoneMessage[]
}

export type SyncType = "INITIAL_BOOTSTRAP" | "RECENT" | "FULL" | "ON_DEMAND"

/** What the client asked its phone for, as the peer read it. */
export interface HistoryRequest {
  readonly phone: string
  readonly chatJid: string
  readonly count: number
  readonly oldestMsgId: string
  readonly oldestMsgFromMe: boolean
  readonly oldestMsgTimestampMs: number
}

const webMessageOf = (chat: PhoneChat, message: PhoneMessage): proto.IWebMessageInfo => ({
  key: { remoteJid: chat.jid, fromMe: message.fromMe, id: message.id, ...(message.participant ? { participant: message.participant } : {}) },
  message: { conversation: message.text },
  messageTimestamp: message.at,
  status: message.fromMe ? proto.WebMessageInfo.Status.DELIVERY_ACK : proto.WebMessageInfo.Status.READ
})

const conversationOf = (chat: PhoneChat): proto.IConversation => ({
  id: chat.jid,
  ...(chat.name === undefined ? {} : { name: chat.name }),
  ...(chat.unreadCount === undefined ? {} : { unreadCount: chat.unreadCount }),
  ...(chat.archived === undefined ? {} : { archived: chat.archived }),
  ...(chat.pinned ? { pinned: Math.floor(Date.now() / 1000) } : {}),
  ...(chat.mutedUntilMs === undefined ? {} : { muteEndTime: chat.mutedUntilMs }),
  // newest first, as the phone sends them
  messages: [...chat.messages].sort((a, b) => b.at - a.at).map((message, order) => ({ message: webMessageOf(chat, message), msgOrderId: order }))
})

/** The phone's notification carrying `chats` inline. */
export const historyNotification = (chats: readonly PhoneChat[], options: { syncType: SyncType; progress?: number; chunkOrder?: number }): proto.IMessage => {
  const syncType = proto.HistorySync.HistorySyncType[options.syncType]
  const blob = proto.HistorySync.encode({
    syncType,
    conversations: chats.map(conversationOf),
    chunkOrder: options.chunkOrder ?? 1,
    ...(options.progress === undefined ? {} : { progress: options.progress })
  }).finish()
  return {
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: {
        syncType: proto.Message.HistorySyncType[options.syncType],
        chunkOrder: options.chunkOrder ?? 1,
        ...(options.progress === undefined ? {} : { progress: options.progress }),
        initialHistBootstrapInlinePayload: deflateSync(blob)
      }
    }
  }
}

/** The on-demand request in a message a client sent its own phone, if it is one. */
export const historyRequestOf = (phone: string, message: proto.IMessage): HistoryRequest | undefined => {
  // the client's own devices get it as a `deviceSentMessage`, like every copy of what it sends
  const protocol = contentOf(message.deviceSentMessage?.message ?? message).protocolMessage
  const request = protocol?.peerDataOperationRequestMessage
  const onDemand = request?.historySyncOnDemandRequest
  if (
    protocol?.type !== proto.Message.ProtocolMessage.Type.PEER_DATA_OPERATION_REQUEST_MESSAGE ||
    request?.peerDataOperationRequestType !== proto.Message.PeerDataOperationRequestType.HISTORY_SYNC_ON_DEMAND ||
    !onDemand?.chatJid
  ) return undefined
  return {
    phone,
    chatJid: onDemand.chatJid,
    count: onDemand.onDemandMsgCount ?? 0,
    oldestMsgId: onDemand.oldestMsgId ?? "",
    oldestMsgFromMe: onDemand.oldestMsgFromMe === true,
    oldestMsgTimestampMs: Number(onDemand.oldestMsgTimestampMs ?? 0)
  }
}

/** The phone's answer: up to `count` of the chat's messages from before the one named, newest first. */
export const onDemandAnswer = (chats: readonly PhoneChat[], request: HistoryRequest): proto.IMessage => {
  const chat = chats.find(c => c.jid === request.chatJid)
  const older = (chat?.messages ?? [])
    .filter(m => m.at * 1000 < request.oldestMsgTimestampMs && m.id !== request.oldestMsgId)
    .sort((a, b) => b.at - a.at)
    .slice(0, request.count)
  return historyNotification(chat ? [{ ...chat, messages: older }] : [], { syncType: "ON_DEMAND", progress: 100 })
}
