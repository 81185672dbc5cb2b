import { type Contact, proto, type WAMessage, type WAMessageKey } from "@whiskeysockets/baileys"
import { expect } from "@effect/vitest"
import type { EngineEvent } from "../../src/runtime/Engine.js"
import type { ActionSocket } from "../../src/runtime/engines/baileys/messageActions.js"
import type { PresenceSocket } from "../../src/runtime/engines/baileys/presence.js"

/**
 * Plain Baileys objects for the Baileys engine's mapping tests: messages as `messages.upsert`
 * hands them over, the people in them, and a socket that records what the engine hands Baileys.
 */

/** The timestamp (seconds) every built message carries. */
export const T = 1_717_000_000

export const ALICE = { id: "15550001111:7@s.whatsapp.net", lid: "111000111:7@lid", name: "Alice" } satisfies Contact
export const BOB = { id: "15551234567:2@s.whatsapp.net", lid: "99887766554433:2@lid", name: "Bob" } satisfies Contact
export const BOB_CHAT = "15551234567@c.us"
export const BOB_WIRE = "15551234567@s.whatsapp.net"
export const GROUP = "120363012345678901@g.us"

/** A message as Baileys hands it over: a decoded `WebMessageInfo` with rc14's extra key fields (`null`: no content). */
export const webMessage = (key: WAMessageKey, message: proto.IMessage | null, extra: Partial<proto.IWebMessageInfo> = {}): WAMessage => {
  const info = proto.WebMessageInfo.fromObject({
    key: { remoteJid: key.remoteJid, fromMe: key.fromMe ?? false, id: key.id, participant: key.participant },
    messageTimestamp: T,
    ...(message === null ? {} : { message: proto.Message.fromObject(message) }),
    ...extra
  })
  return Object.assign(info, { key: { ...info.key, ...key } }) as WAMessage
}

/** The one event there is (the test fails if there are more or none). */
export const only = (events: ReadonlyArray<EngineEvent>) => {
  expect(events).toHaveLength(1)
  return events[0]!
}

export const receivedMessage = (event: EngineEvent) => {
  if (event._tag !== "MessageReceived") throw new Error(`expected MessageReceived, got ${event._tag}`)
  return event.message
}

/** A socket recording what the operations hand Baileys. */
export const recordingSocket = () => {
  const calls: Array<{ readonly op: string; readonly args: ReadonlyArray<unknown> }> = []
  const record = (op: string) => async (...args: ReadonlyArray<unknown>) => {
    calls.push({ op, args })
    return undefined as never
  }
  const sock: ActionSocket & PresenceSocket = {
    sendMessage: record("sendMessage"),
    relayMessage: record("relayMessage"),
    chatModify: record("chatModify"),
    sendPresenceUpdate: record("sendPresenceUpdate"),
    presenceSubscribe: record("presenceSubscribe")
  }
  return { sock, calls }
}
