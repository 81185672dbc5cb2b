import { describe, expect, it } from "@effect/vitest"
import {
  type BaileysEventMap,
  proto,
  type WAMessage,
  type WAMessageKey,
  WAMessageStatus,
  WAMessageStubType
} from "@whiskeysockets/baileys"
import { Effect, Option } from "effect"
import type { EngineEvent, InboundMessage } from "../src/runtime/Engine.js"
import type { PhoneOfLid } from "../src/runtime/engines/baileys/jids.js"
import { MediaRef } from "../src/runtime/engines/baileys/media.js"
import { fromUpdates, fromUpsert, statusOf } from "../src/runtime/engines/baileys/messages.js"
import { fromReactions } from "../src/runtime/engines/baileys/reactions.js"
import { only, receivedMessage, T, webMessage } from "./support/baileysMessages.js"

/** A message as Baileys hands it over, with the push name "Bob" (its sender's, when it is not from me). */
const received = (key: WAMessageKey, message: proto.IMessage | null, extra: Partial<proto.IWebMessageInfo> = {}): WAMessage =>
  webMessage(key, message, { pushName: "Bob", ...extra })

const upsert = (messages: Array<WAMessage>, type: "notify" | "append" = "notify", phoneOfLid?: PhoneOfLid) =>
  fromUpsert({ messages, type }, phoneOfLid)

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

  it.effect("a contact's status update arrives under status@broadcast, from its author (phone id when the key gives it)", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        received({ remoteJid: "status@broadcast", participant: "99887766554433@lid", participantAlt: "15551234567@s.whatsapp.net", id: "S1" }, { conversation: "my status" })
      ])))
      expect(message).toMatchObject({ engineMessageId: "S1", chatId: "status@broadcast", from: "15551234567@c.us", fromLid: "99887766554433@lid", type: "text", text: "my status" })
    }))

  it.effect("protocol bookkeeping, reactions and key-distribution-only messages are ignored", () =>
    Effect.gen(function*() {
      const events = yield* upsert([
        // (revokes and edits are protocol messages too: see baileys-inbound-kinds.test.ts)
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "P1" }, {
          protocolMessage: { type: proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING, ephemeralExpiration: 86400 }
        }),
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "R1" }, { reactionMessage: { text: "👍", key: { id: "3EB0OLD" } } }),
        // Baileys' own record of a group call ringing (the call itself is a CallChanged)
        received({ remoteJid: "120363012345678901@g.us", participant: "15551234567@s.whatsapp.net", id: "CALL1" }, { call: { callKey: Buffer.from("CALL1") } }),
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

  it.effect("content the gateway cannot show yet (an event invitation) is surfaced as unknown, naming the type", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        received({ remoteJid: "15551234567@s.whatsapp.net", id: "I1" }, { eventMessage: { name: "Party", startTime: T } })
      ])))
      expect(message).toMatchObject({ type: "unknown", text: null, error: { code: "UNSUPPORTED_CONTENT" } })
      expect(message.error?.message).toContain("eventMessage")
      expect(message.media).toBeUndefined()
    }))
})

describe("Baileys media messages → MessageReceived with media", () => {
  const BOB_LID = { remoteJid: "99887766554433@lid", remoteJidAlt: "15551234567@s.whatsapp.net", addressingMode: "lid" } as const
  /** The location and keys every media message carries (what the download needs). */
  const located = {
    url: "https://mmg.whatsapp.net/v/t62.7118-24/abc_n.enc?ccb=11-4&oh=01_secret&mms3=true",
    directPath: "/v/t62.7118-24/abc_n.enc?ccb=11-4&oh=01_secret",
    mediaKey: Buffer.alloc(32, 1),
    fileSha256: Buffer.alloc(32, 2),
    fileEncSha256: Buffer.alloc(32, 3),
    mediaKeyTimestamp: T
  }
  const one = (id: string, content: proto.IMessage) =>
    Effect.map(upsert([received({ ...BOB_LID, id }, content)]), (events) => receivedMessage(only(events)))
  /** The message without its media's `ref`, which is checked on its own. */
  const described = ({ media, ...message }: InboundMessage) => ({ ...message, media: media && { ...media, ref: "(ref)" } })

  it.effect("an image with a caption: type, caption, mimetype, and the size from fileLength (a Long)", () =>
    Effect.gen(function*() {
      const content = proto.Message.fromObject({ imageMessage: { ...located, mimetype: "image/jpeg", caption: "look", fileLength: 1234 } })
      // As decoded from the wire: a uint64 is a Long, not a number.
      expect(typeof content.imageMessage?.fileLength).toBe("object")
      const message = yield* one("IMG1", content)
      expect(described(message)).toEqual({
        engineMessageId: "IMG1",
        chatId: "15551234567@c.us",
        from: "15551234567@c.us",
        fromPhone: "15551234567@c.us",
        fromLid: "99887766554433@lid",
        type: "image",
        text: null,
        caption: "look",
        media: { mimetype: "image/jpeg", filename: null, size: 1234, ptt: false, ref: "(ref)" },
        timestamp: new Date(T * 1000)
      })
    }))

  it.effect("the ref holds what downloadMediaMessage needs: the key and the content as received", () =>
    Effect.gen(function*() {
      const content = { imageMessage: { ...located, mimetype: "image/png" } }
      const { media } = yield* one("IMG2", content)
      expect(media?.ref).toBeInstanceOf(MediaRef)
      const { message } = media!.ref as MediaRef
      expect(message.key).toMatchObject({ ...BOB_LID, id: "IMG2", fromMe: false })
      expect(message.message?.imageMessage).toMatchObject({ directPath: located.directPath, mediaKey: located.mediaKey })
    }))

  it.effect("a video inside a view-once envelope, without caption or size", () =>
    Effect.gen(function*() {
      const message = yield* one("VID1", { viewOnceMessageV2: { message: { videoMessage: { ...located, mimetype: "video/mp4", caption: "" } } } })
      expect(message).toMatchObject({ type: "video", text: null, caption: null, media: { mimetype: "video/mp4", filename: null, size: null, ptt: false } })
    }))

  it.effect("audio: a voice note (ptt) in an ephemeral envelope, and a plain audio", () =>
    Effect.gen(function*() {
      const voice = yield* one("PTT1", {
        ephemeralMessage: { message: { audioMessage: { ...located, mimetype: "audio/ogg; codecs=opus", ptt: true, seconds: 3, fileLength: 321 } } }
      })
      expect(voice).toMatchObject({ type: "audio", caption: null, media: { mimetype: "audio/ogg; codecs=opus", size: 321, ptt: true } })
      const song = yield* one("AUD1", { audioMessage: { ...located, mimetype: "audio/mpeg", seconds: 180 } })
      expect(song).toMatchObject({ type: "audio", media: { mimetype: "audio/mpeg", ptt: false } })
    }))

  it.effect("a document keeps its fileName; one with a caption comes wrapped in documentWithCaptionMessage", () =>
    Effect.gen(function*() {
      const plain = yield* one("DOC1", { documentMessage: { ...located, mimetype: "application/pdf", fileName: "report.pdf", fileLength: 200_000 } })
      expect(plain).toMatchObject({
        type: "document",
        caption: null,
        media: { mimetype: "application/pdf", filename: "report.pdf", size: 200_000, ptt: false }
      })
      const captioned = yield* one("DOC2", {
        documentWithCaptionMessage: { message: { documentMessage: { ...located, mimetype: "text/csv", fileName: "q3.csv", caption: "Q3" } } }
      })
      expect(captioned).toMatchObject({ type: "document", caption: "Q3", media: { mimetype: "text/csv", filename: "q3.csv" } })
      const nameless = yield* one("DOC3", { documentMessage: { ...located, mimetype: "application/pdf" } })
      expect(nameless.media?.filename).toBeNull()
    }))
})

describe("Baileys messages.reaction → ReactionReceived", () => {
  const T_MS = 1_717_000_000_123
  /** What rc14 emits: the target's key (this client's view) and the reaction with its own key. */
  const reactionEvent = (
    target: WAMessageKey,
    own: WAMessageKey,
    text: string | null,
    senderTimestampMs: number | null = T_MS
  ): BaileysEventMap["messages.reaction"][number] => ({
    key: target,
    reaction: {
      ...proto.Reaction.fromObject({ ...(text === null ? {} : { text }), ...(senderTimestampMs === null ? {} : { senderTimestampMs }) }),
      key: own
    }
  })
  const bobsReaction = { remoteJid: "99887766554433@lid", remoteJidAlt: "15551234567@s.whatsapp.net", fromMe: false, id: "3EB0REACT1" }
  const reactions = (events: ReadonlyArray<EngineEvent>) =>
    events.map((event) => {
      if (event._tag !== "ReactionReceived") throw new Error(`expected ReactionReceived, got ${event._tag}`)
      return event.reaction
    })

  it.effect("a contact's reaction to our message: phone ids from remoteJidAlt, the target's id, the Long timestamp", () =>
    Effect.gen(function*() {
      const event = reactionEvent({ remoteJid: "99887766554433@lid", fromMe: true, id: "3EB0MINE" }, bobsReaction, "👍")
      // As decoded from the wire: senderTimestampMs is a Long.
      expect(typeof event.reaction.senderTimestampMs).toBe("object")
      expect(reactions(yield* fromReactions([event]))).toEqual([{
        chatId: "15551234567@c.us",
        from: "15551234567@c.us",
        targetEngineMessageId: "3EB0MINE",
        emoji: "👍",
        timestamp: new Date(T_MS)
      }])
    }))

  it.effect("taking a reaction back: text \"\" (or none at all) is emoji \"\"", () =>
    Effect.gen(function*() {
      const target = { remoteJid: "99887766554433@lid", fromMe: false, id: "3EB0THEIRS" }
      const got = reactions(yield* fromReactions([reactionEvent(target, bobsReaction, ""), reactionEvent(target, bobsReaction, null)]))
      expect(got.map((r) => [r.targetEngineMessageId, r.emoji])).toEqual([["3EB0THEIRS", ""], ["3EB0THEIRS", ""]])
    }))

  it.effect("our own reactions (this socket's or the phone's) are dropped, and so is one without a target id", () =>
    Effect.gen(function*() {
      const mine = { remoteJid: "15551234567@s.whatsapp.net", fromMe: true, id: "3EB0OWNREACT" }
      expect(yield* fromReactions([
        reactionEvent({ remoteJid: "15551234567@s.whatsapp.net", fromMe: false, id: "3EB0THEIRS" }, mine, "🔥"),
        reactionEvent({ remoteJid: "99887766554433@lid", fromMe: true }, bobsReaction, "🔥")
      ])).toEqual([])
    }))

  it.effect("a LID reactor without alt: the mapping store is asked, else the LID is used; in a group the participant reacted", () =>
    Effect.gen(function*() {
      const target = { remoteJid: "99887766554433@lid", fromMe: true, id: "3EB0MINE" }
      const lidOnly = { remoteJid: "99887766554433@lid", fromMe: false, id: "3EB0REACT2" }
      const known: PhoneOfLid = (lid) => Effect.succeed(lid === "99887766554433@lid" ? Option.some("15551234567@s.whatsapp.net") : Option.none())
      expect(reactions(yield* fromReactions([reactionEvent(target, lidOnly, "❤️")], known))[0]).toMatchObject({ chatId: "15551234567@c.us", from: "15551234567@c.us" })
      expect(reactions(yield* fromReactions([reactionEvent(target, lidOnly, "❤️")]))[0]).toMatchObject({ chatId: "99887766554433@lid", from: "99887766554433@lid" })

      const inGroup = reactions(yield* fromReactions([reactionEvent(
        { remoteJid: "120363012345678901@g.us", fromMe: true, id: "3EB0GROUP" },
        { remoteJid: "120363012345678901@g.us", participant: "99887766554433@lid", participantAlt: "15551234567@s.whatsapp.net", fromMe: false, id: "3EB0REACT3" },
        "😂"
      )]))
      expect(inGroup).toMatchObject([{ chatId: "120363012345678901@g.us", from: "15551234567@c.us", targetEngineMessageId: "3EB0GROUP" }])
    }))

  it.effect("the reaction's notify upsert is no chat message", () =>
    Effect.gen(function*() {
      expect(yield* upsert([
        received({ ...bobsReaction }, { reactionMessage: { key: { remoteJid: "99887766554433@lid", fromMe: true, id: "3EB0MINE" }, text: "👍", senderTimestampMs: T_MS } })
      ])).toEqual([])
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
