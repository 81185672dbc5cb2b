import { describe, expect, it } from "@effect/vitest"
import {
  type AnyMessageContent,
  chatModificationToAppPatch,
  type ChatModification,
  decryptPollVote,
  generateWAMessageContent,
  type MessageContentGenerationOptions,
  proto
} from "@whiskeysockets/baileys"
import { randomBytes } from "node:crypto"
import { Effect, Exit } from "effect"
import type { EngineError, OutboundContent } from "../src/runtime/Engine.js"
import type { MessageTarget } from "../src/runtime/EngineMessageActions.js"
import { makeMessageActions } from "../src/runtime/engines/baileys/messageActions.js"
import { contentOf } from "../src/runtime/engines/baileys/outbound.js"
import { optionHashOf } from "../src/runtime/engines/baileys/polls.js"
import { makePresenceOperations } from "../src/runtime/engines/baileys/presence.js"
import { buildVcard } from "../src/domain/vcard.js"
import { ALICE, BOB, BOB_CHAT, BOB_WIRE, GROUP, recordingSocket } from "./support/baileysMessages.js"

/**
 * The Baileys engine's mapping of issue 17's message kinds, outbound, with plain proto objects:
 * what the engine hands Baileys is run through Baileys' own `generateWAMessageContent` (what
 * `sendMessage` encrypts and sends), and what the message operations (edit, revoke, star, pin,
 * poll vote, presence) call the socket with. Inbound is baileys-inbound-kinds.test.ts; the wire
 * itself is the loopback peer's to prove.
 */

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
