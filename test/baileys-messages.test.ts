import { describe, expect, it } from "@effect/vitest"
import { proto, type WAMessage, type WAMessageKey, WAMessageStatus, WAMessageStubType } from "@whiskeysockets/baileys"
import { Effect, Option } from "effect"
import type { EngineEvent } from "../src/runtime/Engine.js"
import type { PhoneOfLid } from "../src/runtime/engines/baileys/jids.js"
import { fromUpdates, fromUpsert, statusOf } from "../src/runtime/engines/baileys/messages.js"

const T = 1_717_000_000

/** A message as Baileys hands it over: a decoded `WebMessageInfo` with rc14's extra key fields. */
const received = (key: WAMessageKey, message: proto.IMessage | null, extra: Partial<proto.IWebMessageInfo> = {}): WAMessage => {
  const info = proto.WebMessageInfo.fromObject({
    key: { remoteJid: key.remoteJid, fromMe: key.fromMe ?? false, id: key.id, participant: key.participant },
    messageTimestamp: T,
    pushName: "Bob",
    ...(message === null ? {} : { message: proto.Message.fromObject(message) }),
    ...extra
  })
  return Object.assign(info, { key: { ...info.key, ...key } }) as WAMessage
}

const upsert = (messages: Array<WAMessage>, type: "notify" | "append" = "notify", phoneOfLid?: PhoneOfLid) =>
  fromUpsert({ messages, type }, phoneOfLid)

const only = (events: ReadonlyArray<EngineEvent>) => {
  expect(events).toHaveLength(1)
  return events[0]!
}

const receivedMessage = (event: EngineEvent) => {
  if (event._tag !== "MessageReceived") throw new Error(`expected MessageReceived, got ${event._tag}`)
  return event.message
}

describe("Baileys messages.upsert → MessageReceived", () => {
  it.effect("a plain text (conversation) from a phone JID", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "3EB0AAA1", fromMe: false }, { conversation: "hi there" })
      ])))
      expect(message).toEqual({
        engineMessageId: "3EB0AAA1",
        chatId: "15551234567@c.us",
        from: "15551234567@c.us",
        fromPhone: "15551234567@c.us",
        fromLid: null,
        type: "text",
        text: "hi there",
        timestamp: new Date(T * 1000)
      })
    }))

  it.effect("an extended text (a reply, a link) and an ephemeral-wrapped one", () =>
    Effect.gen(function*() {
      const events = yield* upsert([
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "X1" }, {
          extendedTextMessage: { text: "see https://example.com", contextInfo: { stanzaId: "3EB0PREV" } }
        }),
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "X2" }, {
          ephemeralMessage: { message: { extendedTextMessage: { text: "disappearing" } } }
        })
      ])
      expect(events.map((e) => receivedMessage(e).text)).toEqual(["see https://example.com", "disappearing"])
    }))

  it.effect("a LID sender with the phone in remoteJidAlt: phone chat id, both ids reported", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        received(
          { remoteJid: "99887766554433@lid", remoteJidAlt: "15551234567@s.whatsapp.net", addressingMode: "lid", id: "L1" },
          { conversation: "from a lid" }
        )
      ])))
      expect(message).toMatchObject({
        chatId: "15551234567@c.us",
        from: "15551234567@c.us",
        fromPhone: "15551234567@c.us",
        fromLid: "99887766554433@lid",
        text: "from a lid"
      })
    }))

  it.effect("a LID sender without alt: the mapping store is asked, else the LID is used", () =>
    Effect.gen(function*() {
      const lidOnly = received({ remoteJid: "99887766554433@lid", id: "L2" }, { conversation: "who am i" })
      const known: PhoneOfLid = (lid) => Effect.succeed(lid === "99887766554433@lid" ? Option.some("15551234567@s.whatsapp.net") : Option.none())
      expect(receivedMessage(only(yield* upsert([lidOnly], "notify", known))).chatId).toBe("15551234567@c.us")
      const unknown = receivedMessage(only(yield* upsert([lidOnly])))
      expect(unknown).toMatchObject({ chatId: "99887766554433@lid", fromPhone: null, fromLid: "99887766554433@lid" })
    }))

  it.effect("a group message: the group is the chat, the participant the author", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        received({
          remoteJid: "120363012345678901@g.us",
          participant: "99887766554433@lid",
          participantAlt: "15551234567@s.whatsapp.net",
          id: "G1"
        }, { conversation: "hello group" })
      ])))
      expect(message).toMatchObject({ chatId: "120363012345678901@g.us", from: "15551234567@c.us", fromLid: "99887766554433@lid" })
    }))

  it.effect("status broadcasts, protocol messages, reactions and key-distribution-only messages are ignored", () =>
    Effect.gen(function*() {
      const events = yield* upsert([
        received({ remoteJid: "status@broadcast", participant: "15551234567@s.whatsapp.net", id: "S1" }, { conversation: "my status" }),
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "P1" }, {
          protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: "3EB0OLD" } }
        }),
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "R1" }, { reactionMessage: { text: "👍", key: { id: "3EB0OLD" } } }),
        received({ remoteJid: "120363012345678901@g.us", participant: "15551234567@s.whatsapp.net", id: "K1" }, {
          senderKeyDistributionMessage: { groupId: "120363012345678901@g.us", axolotlSenderKeyDistributionMessage: Buffer.from([1]) }
        }),
        // A group notification stub (someone joined): no content, not a decryption failure.
        received({ remoteJid: "120363012345678901@g.us", participant: "15551234567@s.whatsapp.net", id: "N1" }, null, {
          messageStubType: WAMessageStubType.GROUP_PARTICIPANT_ADD
        })
      ])
      expect(events).toEqual([])
    }))

  it.effect("a CIPHERTEXT stub is surfaced as unknown with DECRYPTION_FAILED", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        received({ remoteJid: "99887766554433@lid", remoteJidAlt: "15551234567@s.whatsapp.net", id: "C1" }, null, {
          messageStubType: WAMessageStubType.CIPHERTEXT,
          messageStubParameters: ["Bad MAC"]
        })
      ])))
      expect(message).toMatchObject({
        engineMessageId: "C1",
        chatId: "15551234567@c.us",
        type: "unknown",
        text: null,
        error: { code: "DECRYPTION_FAILED" }
      })
      expect(message.error?.message).toContain("Bad MAC")
    }))

  it.effect("content the gateway cannot show yet is surfaced as unknown, naming the type", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "I1" }, { imageMessage: { caption: "look", mimetype: "image/jpeg" } })
      ])))
      expect(message).toMatchObject({ type: "unknown", text: null, error: { code: "UNSUPPORTED_CONTENT" } })
      expect(message.error?.message).toContain("imageMessage")
    }))
})

describe("Baileys status of our own messages", () => {
  const ours = (id: string, status: number | null, extra: Partial<proto.IWebMessageInfo> = {}) =>
    received({ remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id }, { conversation: "sent by us" }, {
      ...(status === null ? {} : { status }),
      ...extra
    })

  it("maps every WebMessageInfo.Status", () => {
    expect(statusOf(WAMessageStatus.ERROR)).toBe("failed")
    expect(statusOf(WAMessageStatus.PENDING)).toBeNull()
    expect(statusOf(WAMessageStatus.SERVER_ACK)).toBe("sent")
    expect(statusOf(WAMessageStatus.DELIVERY_ACK)).toBe("delivered")
    expect(statusOf(WAMessageStatus.READ)).toBe("read")
    expect(statusOf(WAMessageStatus.PLAYED)).toBe("played")
    expect(statusOf(undefined)).toBeNull()
  })

  it.effect("the echo of our own send is no received message; PENDING says nothing", () =>
    Effect.gen(function*() {
      expect(yield* upsert([ours("3EB0OWN1", WAMessageStatus.PENDING)], "append")).toEqual([])
    }))

  it.effect("the buffered-receipt case: status merged into the append upsert is reported", () =>
    Effect.gen(function*() {
      expect(only(yield* upsert([ours("3EB0OWN2", WAMessageStatus.DELIVERY_ACK)], "append"))).toMatchObject({
        _tag: "MessageStatusChanged",
        engineMessageId: "3EB0OWN2",
        status: "delivered"
      })
      expect(only(yield* upsert([ours("3EB0OWN3", WAMessageStatus.READ)], "notify"))).toMatchObject({ status: "read" })
    }))

  it("messages.update: receipts of our messages become status changes; PENDING and others' messages do not", () => {
    const events = fromUpdates([
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "A" }, update: { status: WAMessageStatus.SERVER_ACK } },
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "A" }, update: { status: WAMessageStatus.DELIVERY_ACK } },
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "A" }, update: { status: WAMessageStatus.READ } },
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "V" }, update: { status: WAMessageStatus.PLAYED } },
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "B" }, update: { status: WAMessageStatus.PENDING } },
      // A message we received, marked read on another device: not ours to report.
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: false, id: "C" }, update: { status: WAMessageStatus.READ } },
      // A placeholder-resend note without a status.
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "D" }, update: { messageStubParameters: ["x"] } }
    ])
    expect(events.map((e) => e._tag === "MessageStatusChanged" ? `${e.engineMessageId}:${e.status}` : e._tag)).toEqual([
      "A:sent", "A:delivered", "A:read", "V:played"
    ])
  })

  it("an error ack becomes failed with its code", () => {
    const [restricted, other, bare] = fromUpdates([
      {
        key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "E1" },
        update: { status: WAMessageStatus.ERROR, messageStubParameters: ["463", "account restricted"] }
      },
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "E2" }, update: { status: WAMessageStatus.ERROR, messageStubParameters: ["421"] } },
      { key: { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "E3" }, update: { status: WAMessageStatus.ERROR } }
    ])
    expect(restricted).toMatchObject({ engineMessageId: "E1", status: "failed", error: { code: "ACCOUNT_RESTRICTED" } })
    expect(restricted?._tag === "MessageStatusChanged" && restricted.error?.message).toContain("463")
    expect(other).toMatchObject({ status: "failed", error: { code: "ACK_ERROR_421" } })
    expect(bare).toMatchObject({ status: "failed", error: { code: "SEND_FAILED" } })
  })
})
