import { describe, expect, it } from "@effect/vitest"
import { type PresenceData, proto, type WAMessage, type WAPresence } from "@whiskeysockets/baileys"
import { randomBytes } from "node:crypto"
import { Effect, Option } from "effect"
import type { MessageTarget, StoredPoll } from "../src/runtime/EngineMessageActions.js"
import type { PhoneOfLid } from "../src/runtime/engines/baileys/jids.js"
import { MediaRef } from "../src/runtime/engines/baileys/media.js"
import { makeMessageActions } from "../src/runtime/engines/baileys/messageActions.js"
import type { PollLookup } from "../src/runtime/engines/baileys/messageEvents.js"
import { fromUpsert } from "../src/runtime/engines/baileys/messages.js"
import { encryptPollVote } from "../src/runtime/engines/baileys/polls.js"
import { fromPresence } from "../src/runtime/engines/baileys/presence.js"
import { buildVcard } from "../src/domain/vcard.js"
import { ALICE, BOB, BOB_CHAT, BOB_WIRE, GROUP, only, receivedMessage, recordingSocket, T, webMessage } from "./support/baileysMessages.js"

/**
 * The Baileys engine's mapping of issue 17's message kinds, inbound, with plain proto objects:
 * `messages.upsert` / `presence.update` as Baileys emits them, and the engine events they become.
 * Outbound is baileys-outbound-kinds.test.ts; the wire itself is the loopback peer's to prove.
 */

const upsert = (messages: Array<WAMessage>, polls?: PollLookup, phoneOfLid?: PhoneOfLid) =>
  fromUpsert({ messages, type: "notify" }, phoneOfLid, polls)
const fromBob = (id: string, message: proto.IMessage, extra?: Partial<proto.IWebMessageInfo>) =>
  webMessage({ remoteJid: "99887766554433@lid", remoteJidAlt: BOB_WIRE, addressingMode: "lid", id }, message, extra)
describe("Baileys inbound kinds → MessageReceived", () => {
  it.effect("a location, and a live location as where it was", () =>
    Effect.gen(function*() {
      const events = yield* upsert([
        fromBob("L1", { locationMessage: { degreesLatitude: 48.8584, degreesLongitude: 2.2945, name: "Tour Eiffel", address: "Paris", url: "https://maps.example/x" } }),
        fromBob("L2", { liveLocationMessage: { degreesLatitude: -33.86, degreesLongitude: 151.21, caption: "on my way" } })
      ])
      expect(events.map(receivedMessage).map(({ location, text, type }) => ({ type, text, location }))).toEqual([
        { type: "location", text: null, location: { latitude: 48.8584, longitude: 2.2945, name: "Tour Eiffel", address: "Paris", url: "https://maps.example/x" } },
        { type: "location", text: null, location: { latitude: -33.86, longitude: 151.21, name: "on my way", address: null, url: null } }
      ])
    }))

  it.effect("one contact card and several, read from their vCards", () =>
    Effect.gen(function*() {
      const carol = buildVcard({ name: "Carol", phone: "+15557654321", organization: "ACME", email: "carol@example.com" })
      const dave = "BEGIN:VCARD\nVERSION:3.0\nTEL;type=CELL:+49 151 12345678\nEND:VCARD"
      const events = yield* upsert([
        fromBob("C1", { contactMessage: { displayName: "Carol", vcard: carol } }),
        fromBob("C2", { contactsArrayMessage: { displayName: "2 contacts", contacts: [{ displayName: "Carol", vcard: carol }, { displayName: "Dave", vcard: dave }] } })
      ])
      const [one, two] = events.map(receivedMessage)
      expect(one).toMatchObject({ type: "contact", text: null })
      expect(one!.contacts).toEqual([{ name: "Carol", phone: "+15557654321", organization: "ACME", email: "carol@example.com", vcard: carol }])
      expect(two!.contacts?.map(({ name, phone }) => ({ name, phone }))).toEqual([
        { name: "Carol", phone: "+15557654321" },
        { name: "Dave", phone: "+4915112345678" }
      ])
    }))

  it.effect("a sticker is media of kind sticker, with what its download needs", () =>
    Effect.gen(function*() {
      const message = receivedMessage(only(yield* upsert([
        fromBob("S1", { stickerMessage: { mimetype: "image/webp", fileLength: 2048, directPath: "/v/sticker", mediaKey: Buffer.alloc(32, 1) } })
      ])))
      expect(message).toMatchObject({ type: "sticker", text: null, caption: null, media: { mimetype: "image/webp", size: 2048, ptt: false, filename: null } })
      expect(message.media?.ref).toBeInstanceOf(MediaRef)
    }))

  it.effect("polls of every version, with the secret beside them (or on the envelope), or without one", () =>
    Effect.gen(function*() {
      const secret = randomBytes(32)
      const options = [{ optionName: "Yes" }, { optionName: "No" }]
      const events = yield* upsert([
        fromBob("P3", { pollCreationMessageV3: { name: "Single", options, selectableOptionsCount: 1 }, messageContextInfo: { messageSecret: secret } }),
        fromBob("P1", { pollCreationMessage: { name: "Several", options, selectableOptionsCount: 0 }, messageContextInfo: { messageSecret: secret } }),
        fromBob("P2", {
          messageContextInfo: { messageSecret: secret },
          ephemeralMessage: { message: { pollCreationMessageV2: { name: "Wrapped", options, selectableOptionsCount: 2 } } }
        }),
        fromBob("P0", { pollCreationMessageV3: { name: "Secretless", options, selectableOptionsCount: 1 } })
      ])
      const polls = events.map(receivedMessage)
      expect(polls.map(({ poll, text, type }) => ({ type, text, name: poll?.name, options: poll?.options, selectableCount: poll?.selectableCount }))).toEqual([
        { type: "poll", text: null, name: "Single", options: ["Yes", "No"], selectableCount: 1 },
        { type: "poll", text: null, name: "Several", options: ["Yes", "No"], selectableCount: 0 },
        { type: "poll", text: null, name: "Wrapped", options: ["Yes", "No"], selectableCount: 2 }
      ].concat([{ type: "poll", text: null, name: "Secretless", options: ["Yes", "No"], selectableCount: 1 }]))
      expect(polls.slice(0, 3).map(({ poll }) => Buffer.from(poll!.secret!))).toEqual([secret, secret, secret])
      expect(polls[3]!.poll?.secret).toBeNull()
    }))

  it.effect("a text with a link preview, and a forwarded message", () =>
    Effect.gen(function*() {
      const thumbnail = Buffer.from([0xff, 0xd8, 0xff, 9, 9])
      const events = yield* upsert([
        fromBob("T1", {
          extendedTextMessage: { text: "read https://example.com/a", matchedText: "https://example.com/a", title: "A", description: "About a", jpegThumbnail: thumbnail }
        }),
        fromBob("T2", { extendedTextMessage: { text: "passing this on", contextInfo: { isForwarded: true, forwardingScore: 3 } } }),
        fromBob("T3", { locationMessage: { degreesLatitude: 1, degreesLongitude: 2, contextInfo: { isForwarded: true } } }),
        fromBob("T4", { conversation: "plain" })
      ])
      const [preview, forwardedText, forwardedLocation, plain] = events.map(receivedMessage)
      expect(preview!.linkPreview).toEqual({ url: "https://example.com/a", title: "A", description: "About a", thumbnail: thumbnail.toString("base64") })
      expect(preview!.forwarded).toBeUndefined()
      expect(forwardedText).toMatchObject({ text: "passing this on", forwarded: true })
      expect(forwardedLocation).toMatchObject({ type: "location", forwarded: true })
      expect(plain!.linkPreview).toBeUndefined()
      expect(plain!.forwarded).toBeUndefined()
    }))
})

describe("Baileys inbound actions → MessageRevoked / MessageEdited / MessagePinned / PollVoteReceived", () => {
  const ProtocolType = proto.Message.ProtocolMessage.Type

  it.effect("a revoke names the deleted message and who deleted it; the account's own are left", () =>
    Effect.gen(function*() {
      const events = yield* upsert([
        fromBob("R1", { protocolMessage: { type: ProtocolType.REVOKE, key: { remoteJid: BOB_WIRE, fromMe: true, id: "3EB0GONE" } } }),
        webMessage({ remoteJid: BOB_WIRE, fromMe: true, id: "R2" }, { protocolMessage: { type: ProtocolType.REVOKE, key: { id: "3EB0MINE" } } })
      ])
      expect(only(events)).toMatchObject({
        _tag: "MessageRevoked",
        revoke: { chatId: BOB_CHAT, from: BOB_CHAT, targetEngineMessageId: "3EB0GONE", timestamp: new Date(T * 1000) }
      })
    }))

  it.effect("an edit of a text and of a caption (also wrapped, as edits may come) carries the new text", () =>
    Effect.gen(function*() {
      const editedAt = (T + 60) * 1000
      const events = yield* upsert([
        fromBob("E1", {
          protocolMessage: { type: ProtocolType.MESSAGE_EDIT, key: { id: "3EB0TXT" }, editedMessage: { conversation: "new text" }, timestampMs: editedAt }
        }),
        fromBob("E2", {
          editedMessage: {
            message: {
              protocolMessage: { type: ProtocolType.MESSAGE_EDIT, key: { id: "3EB0IMG" }, editedMessage: { imageMessage: { caption: "new caption" } } }
            }
          }
        })
      ])
      expect(events).toMatchObject([
        { _tag: "MessageEdited", edit: { chatId: BOB_CHAT, from: BOB_CHAT, targetEngineMessageId: "3EB0TXT", text: "new text", timestamp: new Date(editedAt) } },
        { _tag: "MessageEdited", edit: { targetEngineMessageId: "3EB0IMG", text: "new caption", timestamp: new Date(T * 1000) } }
      ])
    }))

  it.effect("a pin and an unpin in a group, by the participant", () =>
    Effect.gen(function*() {
      const inGroup = (id: string, type: proto.Message.PinInChatMessage.Type) =>
        webMessage({ remoteJid: GROUP, participant: BOB_WIRE, id }, {
          pinInChatMessage: { key: { remoteJid: GROUP, id: "3EB0PIN", fromMe: false }, type, senderTimestampMs: T * 1000 + 5 }
        })
      const events = yield* upsert([
        inGroup("N1", proto.Message.PinInChatMessage.Type.PIN_FOR_ALL),
        inGroup("N2", proto.Message.PinInChatMessage.Type.UNPIN_FOR_ALL)
      ])
      expect(events).toMatchObject([
        { _tag: "MessagePinned", pin: { chatId: GROUP, from: BOB_CHAT, targetEngineMessageId: "3EB0PIN", pinned: true, timestamp: new Date(T * 1000 + 5) } },
        { _tag: "MessagePinned", pin: { targetEngineMessageId: "3EB0PIN", pinned: false } }
      ])
    }))

  describe("poll votes", () => {
    const secret = new Uint8Array(randomBytes(32))
    const alicesPoll: StoredPoll = {
      name: "Lunch?",
      options: ["Pizza", "Sushi", "Tacos"],
      selectableCount: 0,
      secret,
      chatId: BOB_CHAT,
      fromMe: true,
      from: "15550001111@c.us"
    }
    const alice: PollLookup = {
      lookupPoll: (id) => Effect.succeed(id === "3EB0POLL" ? Option.some(alicesPoll) : Option.none()),
      me: () => ALICE
    }
    const voteFromBob = (id: string, update: proto.Message.IPollUpdateMessage) => fromBob(id, { pollUpdateMessage: update })

    it.effect("round trip: Bob's vote, encrypted by this engine, decrypted on Alice's side into option texts", () =>
      Effect.gen(function*() {
        const { calls, sock } = recordingSocket()
        const target: MessageTarget = { engineMessageId: "3EB0POLL", fromMe: false, from: "15550001111@c.us" }
        yield* makeMessageActions(sock, () => BOB).votePoll({ chatId: "15550001111@c.us", target, poll: alicesPoll, options: ["Tacos", "Pizza"] })
        const sent = (calls[0]!.args[1] as proto.IMessage).pollUpdateMessage!
        // As it reaches Alice: Bob's message, the poll's key from her side.
        const vote = only(yield* upsert([voteFromBob("V1", {
          ...sent,
          pollCreationMessageKey: { remoteJid: "99887766554433@lid", fromMe: true, id: "3EB0POLL" }
        })], alice))
        expect(vote).toMatchObject({
          _tag: "PollVoteReceived",
          vote: { chatId: BOB_CHAT, voter: BOB_CHAT, targetEngineMessageId: "3EB0POLL", options: ["Pizza", "Tacos"] }
        })
      }))

    it.effect("a vote whose keys name both by LID decrypts too; a withdrawn vote is empty", () =>
      Effect.gen(function*() {
        const parties = { pollId: "3EB0POLL", creatorJid: "111000111@lid", voterJid: "99887766554433@lid" }
        const key = { remoteJid: "99887766554433@lid", fromMe: true, id: "3EB0POLL" }
        const events = yield* upsert([
          voteFromBob("V2", { pollCreationMessageKey: key, vote: encryptPollVote(secret, parties, ["Sushi"]), senderTimestampMs: T * 1000 }),
          voteFromBob("V3", { pollCreationMessageKey: key, vote: encryptPollVote(secret, parties, []), senderTimestampMs: T * 1000 + 1 })
        ], alice)
        expect(events).toMatchObject([
          { _tag: "PollVoteReceived", vote: { options: ["Sushi"], timestamp: new Date(T * 1000) } },
          { _tag: "PollVoteReceived", vote: { options: [] } }
        ])
      }))

    it.effect("a vote on an unknown poll, or under another secret, yields nothing (and is no message)", () =>
      Effect.gen(function*() {
        const parties = { pollId: "3EB0POLL", creatorJid: "15550001111@s.whatsapp.net", voterJid: BOB_WIRE }
        const events = yield* upsert([
          voteFromBob("V4", { pollCreationMessageKey: { id: "3EB0ELSE" }, vote: encryptPollVote(secret, { ...parties, pollId: "3EB0ELSE" }, ["Pizza"]) }),
          voteFromBob("V5", { pollCreationMessageKey: { id: "3EB0POLL" }, vote: encryptPollVote(randomBytes(32), parties, ["Pizza"]) })
        ], alice)
        expect(events).toEqual([])
      }))
  })
})

describe("Baileys presence.update → PresenceUpdated", () => {
  /** Built as rc14's `handlePresenceUpdate` builds them: a `<presence>` always names `lastSeen`, a `<chatstate>` does not. */
  const presenceStanza = (type: "available" | "unavailable", last?: number): PresenceData => ({
    lastKnownPresence: type,
    lastSeen: last,
    groupOnlineCount: undefined
  } as unknown as PresenceData)
  const chatState = (type: WAPresence): PresenceData => ({ lastKnownPresence: type })

  it.effect("online, offline with last seen, typing, recording, and a paused chat state", () =>
    Effect.gen(function*() {
      const cases: Array<[PresenceData, string]> = [
        [presenceStanza("available"), "online"],
        [presenceStanza("unavailable", T), "offline"],
        [chatState("composing"), "typing"],
        [chatState("recording"), "recording"],
        [chatState("available"), "paused"]
      ]
      const events = yield* Effect.forEach(cases, ([data]) => fromPresence({ id: BOB_WIRE, presences: { [BOB_WIRE]: data } }))
      expect(events.map((e) => only(e))).toEqual(cases.map(([, state], index) => expect.objectContaining({
        _tag: "PresenceUpdated",
        presence: { chatId: BOB_CHAT, state, lastSeen: index === 1 ? new Date(T * 1000) : null }
      })))
    }))

  it.effect("a LID is reported by its phone when known; presences in groups are left", () =>
    Effect.gen(function*() {
      const phoneOfLid: PhoneOfLid = (lid) => Effect.succeed(lid === "99887766554433@lid" ? Option.some(BOB_WIRE) : Option.none())
      const lid = yield* fromPresence({ id: "99887766554433@lid", presences: { "99887766554433@lid": chatState("composing") } }, phoneOfLid)
      expect(only(lid)).toMatchObject({ presence: { chatId: BOB_CHAT, state: "typing" } })
      expect(yield* fromPresence({ id: GROUP, presences: { [BOB_WIRE]: chatState("composing") } })).toEqual([])
    }))
})
