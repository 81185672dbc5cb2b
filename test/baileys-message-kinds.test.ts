import { describe, expect, it } from "@effect/vitest"
import {
  type AnyMessageContent,
  chatModificationToAppPatch,
  type ChatModification,
  type Contact,
  decryptPollVote,
  generateWAMessageContent,
  type MessageContentGenerationOptions,
  type PresenceData,
  proto,
  type WAMessage,
  type WAMessageKey,
  type WAPresence
} from "@whiskeysockets/baileys"
import { randomBytes } from "node:crypto"
import { Effect, Exit, Option } from "effect"
import type { EngineError, EngineEvent, OutboundContent } from "../src/runtime/Engine.js"
import type { MessageTarget, StoredPoll } from "../src/runtime/EngineMessageActions.js"
import type { PhoneOfLid } from "../src/runtime/engines/baileys/jids.js"
import { MediaRef } from "../src/runtime/engines/baileys/media.js"
import { type ActionSocket, makeMessageActions } from "../src/runtime/engines/baileys/messageActions.js"
import type { PollLookup } from "../src/runtime/engines/baileys/messageEvents.js"
import { fromUpsert } from "../src/runtime/engines/baileys/messages.js"
import { contentOf } from "../src/runtime/engines/baileys/outbound.js"
import { encryptPollVote, optionHashOf } from "../src/runtime/engines/baileys/polls.js"
import { fromPresence, makePresenceOperations, type PresenceSocket } from "../src/runtime/engines/baileys/presence.js"
import { buildVcard } from "../src/domain/vcard.js"

/**
 * The Baileys engine's mapping of issue 17's message kinds, both ways, with plain proto objects:
 * outbound, what the engine hands Baileys is run through Baileys' own `generateWAMessageContent`
 * (what `sendMessage` encrypts and sends); inbound, `messages.upsert` / `presence.update` as
 * Baileys emits them. The wire itself is the loopback peer's to prove.
 */

const T = 1_717_000_000
const ALICE = { id: "15550001111:7@s.whatsapp.net", lid: "111000111:7@lid", name: "Alice" } satisfies Contact
const BOB = { id: "15551234567:2@s.whatsapp.net", lid: "99887766554433:2@lid", name: "Bob" } satisfies Contact
const BOB_CHAT = "15551234567@c.us"
const BOB_WIRE = "15551234567@s.whatsapp.net"
const GROUP = "120363012345678901@g.us"

/** What Baileys did on the side while building a message. */
interface SideEffects {
  readonly uploads: Array<string>
  /** Links Baileys tried to fetch a preview of (it must not: the gateway fetches them, or chose none). */
  readonly fetched: Array<string>
}

/** What `sendMessage` builds from a content; media uploads and preview fetches are recorded, not done. */
const generated = (content: AnyMessageContent, side: SideEffects = { uploads: [], fetched: [] }) => {
  const options: MessageContentGenerationOptions = {
    upload: async (_path, { mediaType }) => {
      side.uploads.push(mediaType)
      return { mediaUrl: "https://mmg.example/enc", directPath: "/v/enc" }
    },
    getUrlInfo: async (url) => {
      side.fetched.push(url)
      return undefined
    }
  }
  return Effect.promise(() => generateWAMessageContent(content, options))
}

const noExtras = { mentions: [], forwarded: false }

const received = (key: WAMessageKey, message: proto.IMessage, extra: Partial<proto.IWebMessageInfo> = {}): WAMessage => {
  const info = proto.WebMessageInfo.fromObject({
    key: { remoteJid: key.remoteJid, fromMe: key.fromMe ?? false, id: key.id, participant: key.participant },
    messageTimestamp: T,
    message: proto.Message.fromObject(message),
    ...extra
  })
  return Object.assign(info, { key: { ...info.key, ...key } }) as WAMessage
}

const upsert = (messages: Array<WAMessage>, polls?: PollLookup, phoneOfLid?: PhoneOfLid) =>
  fromUpsert({ messages, type: "notify" }, phoneOfLid, polls)

const only = (events: ReadonlyArray<EngineEvent>) => {
  expect(events).toHaveLength(1)
  return events[0]!
}

const receivedMessage = (event: EngineEvent) => {
  if (event._tag !== "MessageReceived") throw new Error(`expected MessageReceived, got ${event._tag}`)
  return event.message
}

const fromBob = (id: string, message: proto.IMessage, extra?: Partial<proto.IWebMessageInfo>) =>
  received({ remoteJid: "99887766554433@lid", remoteJidAlt: BOB_WIRE, addressingMode: "lid", id }, message, extra)

/** A socket recording what the operations hand Baileys. */
const recordingSocket = () => {
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

const failureOf = <A>(exit: Exit.Exit<A, EngineError>) => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : null
  if (failure === null) throw new Error("expected an EngineError")
  return failure
}

describe("Baileys outbound contents", () => {
  it.effect("a location becomes a locationMessage", () =>
    Effect.gen(function*() {
      const content: OutboundContent = {
        type: "location",
        location: { latitude: 52.52, longitude: 13.405, name: "Brandenburger Tor", address: "Pariser Platz, Berlin", url: null }
      }
      const message = yield* generated(contentOf(content, noExtras))
      expect(message.locationMessage).toMatchObject({
        degreesLatitude: 52.52,
        degreesLongitude: 13.405,
        name: "Brandenburger Tor",
        address: "Pariser Platz, Berlin"
      })
      expect(message.locationMessage?.url).toBeFalsy()
    }))

  it.effect("one contact card becomes a contactMessage, several a contactsArrayMessage", () =>
    Effect.gen(function*() {
      const carol = { name: "Carol", vcard: buildVcard({ name: "Carol", phone: "+15557654321" }) }
      const dave = { name: "Dave", vcard: buildVcard({ name: "Dave", phone: "+4915112345678" }) }
      const one = yield* generated(contentOf({ type: "contacts", contacts: [carol] }, noExtras))
      expect(one.contactMessage).toMatchObject({ displayName: "Carol", vcard: carol.vcard })
      expect(one.contactsArrayMessage).toBeFalsy()
      const two = yield* generated(contentOf({ type: "contacts", contacts: [carol, dave] }, noExtras))
      expect(two.contactsArrayMessage?.displayName).toBe("2 contacts")
      expect(two.contactsArrayMessage?.contacts?.map((card) => [card.displayName, card.vcard])).toEqual([
        ["Carol", carol.vcard],
        ["Dave", dave.vcard]
      ])
    }))

  it.effect("a poll carries the gateway's secret: V3 for a single choice, pollCreationMessage for several", () =>
    Effect.gen(function*() {
      const secret = new Uint8Array(randomBytes(32))
      const single = yield* generated(contentOf({
        type: "poll",
        poll: { name: "Lunch?", options: ["Pizza", "Sushi"], selectableCount: 1, secret }
      }, noExtras))
      expect(single.pollCreationMessageV3).toMatchObject({
        name: "Lunch?",
        selectableOptionsCount: 1,
        options: [{ optionName: "Pizza" }, { optionName: "Sushi" }]
      })
      expect(Buffer.from(single.messageContextInfo!.messageSecret!)).toEqual(Buffer.from(secret))
      const several = yield* generated(contentOf({
        type: "poll",
        poll: { name: "Which days?", options: ["Mon", "Tue", "Wed"], selectableCount: 0, secret }
      }, noExtras))
      expect(several.pollCreationMessage).toMatchObject({ name: "Which days?", selectableOptionsCount: 0 })
      expect(several.pollCreationMessageV3).toBeFalsy()
      expect(Buffer.from(several.messageContextInfo!.messageSecret!)).toEqual(Buffer.from(secret))
    }))

  it.effect("a sticker becomes a stickerMessage, uploaded as a sticker", () =>
    Effect.gen(function*() {
      const side: SideEffects = { uploads: [], fetched: [] }
      const webp = new Uint8Array(Buffer.from("RIFF\u0000\u0000\u0000\u0000WEBPVP8 fake sticker bytes"))
      const message = yield* generated(contentOf({
        type: "media",
        media: { kind: "sticker", data: webp, mimetype: "image/webp", filename: null, caption: null, ptt: false }
      }, noExtras), side)
      expect(message.stickerMessage).toMatchObject({ mimetype: "image/webp", directPath: "/v/enc" })
      expect(side.uploads).toEqual(["sticker"])
    }))

  it.effect("a text with the gateway's link preview carries it; without one nothing is fetched", () =>
    Effect.gen(function*() {
      const thumbnail = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3])
      const side: SideEffects = { uploads: [], fetched: [] }
      const withPreview = yield* generated(contentOf({
        type: "text",
        text: "look https://example.com/post",
        linkPreview: { url: "https://example.com/post", title: "A post", description: "What it says", thumbnail }
      }, noExtras), side)
      expect(withPreview.extendedTextMessage).toMatchObject({
        text: "look https://example.com/post",
        matchedText: "https://example.com/post",
        title: "A post",
        description: "What it says"
      })
      expect(Buffer.from(withPreview.extendedTextMessage!.jpegThumbnail!)).toEqual(Buffer.from(thumbnail))
      const without = yield* generated(contentOf({ type: "text", text: "plain https://example.com/other" }, noExtras), side)
      expect(without.extendedTextMessage?.text).toBe("plain https://example.com/other")
      expect(without.extendedTextMessage?.matchedText).toBeFalsy()
      expect(side.fetched).toEqual([])
    }))

  it.effect("a forwarded message is marked so in its contextInfo, whatever its kind", () =>
    Effect.gen(function*() {
      const forwarded = { mentions: [], forwarded: true }
      const text = yield* generated(contentOf({ type: "text", text: "fwd" }, forwarded))
      expect(text.extendedTextMessage?.contextInfo).toMatchObject({ isForwarded: true, forwardingScore: 1 })
      const location = yield* generated(contentOf({
        type: "location",
        location: { latitude: 1, longitude: 2, name: null, address: null, url: null }
      }, forwarded))
      expect(location.locationMessage?.contextInfo).toMatchObject({ isForwarded: true })
      const mentioned = yield* generated(contentOf({ type: "text", text: "hi @15551234567" }, { mentions: [BOB_WIRE], forwarded: true }))
      expect(mentioned.extendedTextMessage?.contextInfo).toMatchObject({ isForwarded: true, mentionedJid: [BOB_WIRE] })
      const plain = yield* generated(contentOf({ type: "text", text: "mine" }, noExtras))
      expect(plain.extendedTextMessage?.contextInfo?.isForwarded).toBeFalsy()
    }))
})

describe("Baileys message operations", () => {
  const own: MessageTarget = { engineMessageId: "3EB0MINE", fromMe: true, from: "15550001111@c.us" }
  const bobs: MessageTarget = { engineMessageId: "3EB0BOBS", fromMe: false, from: BOB_CHAT }

  it.effect("an edit of a text is Baileys' edit: a MESSAGE_EDIT protocol message naming the message", () =>
    Effect.gen(function*() {
      const { calls, sock } = recordingSocket()
      yield* makeMessageActions(sock, () => ALICE).edit({ chatId: BOB_CHAT, target: own, type: "text", text: "fixed typo" })
      const [jid, content] = calls[0]!.args as [string, AnyMessageContent]
      expect(jid).toBe(BOB_WIRE)
      const message = yield* generated(content)
      expect(message.protocolMessage).toMatchObject({
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        key: { remoteJid: BOB_WIRE, fromMe: true, id: "3EB0MINE" },
        editedMessage: { extendedTextMessage: { text: "fixed typo" } }
      })
    }))

  it.effect("an edit of a caption sends the media's kind with only the new caption, as an edit stanza", () =>
    Effect.gen(function*() {
      const { calls, sock } = recordingSocket()
      yield* makeMessageActions(sock, () => ALICE).edit({ chatId: BOB_CHAT, target: own, type: "image", text: "new caption" })
      const [jid, message, options] = calls[0]!.args as [string, proto.IMessage, { additionalAttributes: Record<string, string> }]
      expect(calls[0]!.op).toBe("relayMessage")
      expect(jid).toBe(BOB_WIRE)
      expect(options.additionalAttributes).toEqual({ edit: "1" })
      expect(message.protocolMessage).toMatchObject({
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        key: { id: "3EB0MINE", fromMe: true },
        editedMessage: { imageMessage: { caption: "new caption" } }
      })
      const audio = yield* Effect.exit(makeMessageActions(sock, () => ALICE).edit({ chatId: BOB_CHAT, target: own, type: "audio", text: "x" }))
      expect(failureOf(audio)).toMatchObject({ refusal: "invalid" })
      expect(calls).toHaveLength(1)
    }))

  it.effect("a revoke is a REVOKE protocol message; in a group, of someone else's message, it names them", () =>
    Effect.gen(function*() {
      const { calls, sock } = recordingSocket()
      const actions = makeMessageActions(sock, () => ALICE)
      yield* actions.revoke(BOB_CHAT, own)
      yield* actions.revoke(GROUP, bobs)
      const mine = yield* generated(calls[0]!.args[1] as AnyMessageContent)
      expect(mine.protocolMessage).toMatchObject({ type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: "3EB0MINE", fromMe: true } })
      const admins = yield* generated(calls[1]!.args[1] as AnyMessageContent)
      expect(admins.protocolMessage?.key).toMatchObject({ remoteJid: GROUP, fromMe: false, id: "3EB0BOBS", participant: BOB_WIRE })
    }))

  it.effect("a star is an app-state patch on the message; a pin is a pinInChatMessage with its duration", () =>
    Effect.gen(function*() {
      const { calls, sock } = recordingSocket()
      const actions = makeMessageActions(sock, () => ALICE)
      yield* actions.star(BOB_CHAT, bobs, true)
      const [modification, jid] = calls[0]!.args as [ChatModification, string]
      const patch = chatModificationToAppPatch(modification, jid)
      expect(patch.index).toEqual(["star", BOB_WIRE, "3EB0BOBS", "0", "0"])
      expect(patch.syncAction.starAction?.starred).toBe(true)

      yield* actions.pin({ chatId: BOB_CHAT, target: own, pinned: true, durationSeconds: 604800 })
      yield* actions.pin({ chatId: BOB_CHAT, target: own, pinned: false, durationSeconds: 604800 })
      const pinned = yield* generated(calls[1]!.args[1] as AnyMessageContent)
      expect(pinned.pinInChatMessage).toMatchObject({ type: proto.Message.PinInChatMessage.Type.PIN_FOR_ALL, key: { id: "3EB0MINE" } })
      expect(pinned.messageContextInfo?.messageAddOnDurationInSecs).toBe(604800)
      const unpinned = yield* generated(calls[2]!.args[1] as AnyMessageContent)
      expect(unpinned.pinInChatMessage?.type).toBe(proto.Message.PinInChatMessage.Type.UNPIN_FOR_ALL)
    }))

  it.effect("a vote is a pollUpdateMessage, encrypted so that Baileys' decryptPollVote reads the options", () =>
    Effect.gen(function*() {
      const { calls, sock } = recordingSocket()
      const secret = new Uint8Array(randomBytes(32))
      const poll = { name: "Lunch?", options: ["Pizza", "Sushi", "Tacos"], selectableCount: 0, secret }
      yield* makeMessageActions(sock, () => BOB).votePoll({ chatId: "15550001111@c.us", target: { ...own, fromMe: false }, poll, options: ["Sushi", "Tacos"] })
      const [, message, options] = calls[0]!.args as [string, proto.IMessage, { additionalNodes: ReadonlyArray<unknown> }]
      expect(options.additionalNodes).toEqual([{ tag: "meta", attrs: { polltype: "vote" } }])
      const update = message.pollUpdateMessage!
      expect(update.pollCreationMessageKey).toMatchObject({ id: "3EB0MINE", fromMe: false })
      const vote = decryptPollVote(update.vote!, {
        pollEncKey: secret,
        pollMsgId: "3EB0MINE",
        pollCreatorJid: "15550001111@s.whatsapp.net",
        voterJid: BOB_WIRE
      })
      expect(vote.selectedOptions.map((hash) => Buffer.from(hash))).toEqual([optionHashOf("Sushi"), optionHashOf("Tacos")])
    }))

  it.effect("a vote on a poll without its secret is refused as a conflict, and nothing is sent", () =>
    Effect.gen(function*() {
      const { calls, sock } = recordingSocket()
      const exit = yield* Effect.exit(makeMessageActions(sock, () => BOB).votePoll({
        chatId: BOB_CHAT,
        target: bobs,
        poll: { name: "?", options: ["a", "b"], selectableCount: 1, secret: null },
        options: ["a"]
      }))
      expect(failureOf(exit)).toMatchObject({ refusal: "conflict", code: "POLL_SECRET_MISSING" })
      expect(calls).toEqual([])
    }))

  it.effect("presence: online/offline everywhere (needs the push name), chat states in one chat, subscriptions", () =>
    Effect.gen(function*() {
      const { calls, sock } = recordingSocket()
      const presence = makePresenceOperations(sock, () => ALICE)
      yield* presence.set({ state: "online" })
      yield* presence.set({ state: "offline" })
      yield* presence.set({ chatId: BOB_CHAT, state: "typing" })
      yield* presence.set({ chatId: BOB_CHAT, state: "recording" })
      yield* presence.set({ chatId: GROUP, state: "paused" })
      yield* presence.subscribe(BOB_CHAT)
      expect(calls.map(({ args, op }) => [op, ...args])).toEqual([
        ["sendPresenceUpdate", "available"],
        ["sendPresenceUpdate", "unavailable"],
        ["sendPresenceUpdate", "composing", BOB_WIRE],
        ["sendPresenceUpdate", "recording", BOB_WIRE],
        ["sendPresenceUpdate", "paused", GROUP],
        ["presenceSubscribe", BOB_WIRE]
      ])
      const nameless = yield* Effect.exit(makePresenceOperations(sock, () => ({ id: ALICE.id })).set({ state: "online" }))
      expect(failureOf(nameless)).toMatchObject({ refusal: "conflict" })
      expect(calls).toHaveLength(6)
    }))
})

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
        received({ remoteJid: BOB_WIRE, fromMe: true, id: "R2" }, { protocolMessage: { type: ProtocolType.REVOKE, key: { id: "3EB0MINE" } } })
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
        received({ remoteJid: GROUP, participant: BOB_WIRE, id }, {
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
