/**
 * Every kind of WhatsApp message on the loopback peer against the REAL Baileys client (rc14):
 * what Baileys sends a contact (location, contact cards, sticker, poll, link preview, forward,
 * edit, revoke, pin, presence) is recorded whole by the contact; what a contact sends (the same
 * kinds, poll votes sealed with the poll's secret, edits, revokes, presence, chatstates) is
 * what Baileys reads back — votes checked with Baileys' own `decryptPollVote`.
 */
import { describe, expect, it } from "vitest"
import { createHash, randomBytes } from "node:crypto"
import sharp from "sharp"
import {
  aesEncryptGCM,
  decryptPollVote,
  downloadMediaMessage,
  hmacSign,
  proto,
  type WAMessage,
  type WASocket
} from "@whiskeysockets/baileys"
import { contentOf, contextInfoOf, forwardedMessage, linkPreviewMessage, type ClientPresence, type FakeContact, type ReceivedMessage } from "./support/wa-peer/index.js"
import { onEvent, useRawPeer } from "./support/wa-peer/raw-client.js"

const ALICE = "15551230001"
const BOB = "15551230002"

const loopback = useRawPeer()

const sha256 = (text: string) => createHash("sha256").update(text).digest()
const webp = () => sharp({ create: { width: 16, height: 16, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 1 } } }).webp().toBuffer()

/** Alice's client and Bob, a contact. */
const aliceAndBob = async () => {
  const { sock } = await loopback.clients.pair(ALICE)
  return { sock, bob: loopback.peer.contact(BOB, { name: "Bob" }) }
}

/** What a contact decrypted of message `id` (it may have arrived before the sender's call returned). */
const receivedById = (id: string): Promise<ReceivedMessage> => {
  const already = loopback.peer.received.find(m => m.id === id)
  return already ? Promise.resolve(already) : loopback.peer.waitFor<ReceivedMessage>("received", m => m.id === id)
}

/** Alice's client sends `content` to Bob; resolves with what Bob's phone decrypted. */
const sendToBob = async (sock: WASocket, bob: FakeContact, content: Parameters<WASocket["sendMessage"]>[1]) => {
  const sent = await sock.sendMessage(bob.jid, content)
  return { sent: sent!, received: await receivedById(sent!.key.id!) }
}

/** Bob sends something to Alice's client; resolves with the upserted message. */
const fromBob = async (sock: WASocket, send: () => Promise<string>): Promise<WAMessage> => {
  const ids = new Set<string>()
  const upsert = onEvent(sock, "messages.upsert", u => u.messages.some(m => ids.has(m.key.id ?? "")), "the upsert")
  ids.add(await send())
  return (await upsert).messages.find(m => ids.has(m.key.id ?? ""))!
}

describe("wa-peer kinds: client → contact, recorded whole", () => {
  it("a location, one contact card and several", async () => {
    const { sock, bob } = await aliceAndBob()
    const location = await sendToBob(sock, bob, { location: { degreesLatitude: 52.3731, degreesLongitude: 4.8926, name: "Dam", address: "Amsterdam" } })
    expect(location.received.kind).toBe("location")
    expect(location.received.message.locationMessage).toMatchObject({ degreesLatitude: 52.3731, degreesLongitude: 4.8926, name: "Dam", address: "Amsterdam" })
    const vcard = "BEGIN:VCARD\nVERSION:3.0\nFN:Carol\nTEL;type=CELL;waid=15551230003:+15551230003\nEND:VCARD"
    const one = await sendToBob(sock, bob, { contacts: { displayName: "Carol", contacts: [{ displayName: "Carol", vcard }] } })
    expect(one.received.kind).toBe("contact")
    expect(one.received.message.contactMessage).toMatchObject({ displayName: "Carol", vcard })
    const two = await sendToBob(sock, bob, {
      contacts: { displayName: "2 contacts", contacts: [{ displayName: "Carol", vcard }, { displayName: "Dave", vcard: vcard.replace(/Carol/g, "Dave") }] }
    })
    expect(two.received.kind).toBe("contacts")
    expect(two.received.message.contactsArrayMessage?.contacts?.map(c => c.displayName)).toEqual(["Carol", "Dave"])
    expect(bob.received().map(m => Object.keys(m)[0])).toEqual(["locationMessage", "contactMessage", "contactsArrayMessage"])
    expect(loopback.peer.errors).toEqual([])
  })

  it("a sticker is uploaded and decrypts to the same WebP", async () => {
    const { sock, bob } = await aliceAndBob()
    const bytes = await webp()
    const { received } = await sendToBob(sock, bob, { sticker: bytes })
    expect(received).toMatchObject({ kind: "sticker", media: "sticker" })
    expect(received.message.stickerMessage?.mimetype).toBe("image/webp")
    const media = await loopback.peer.downloadMedia(received)
    expect(media.bytes.equals(bytes)).toBe(true)
  })

  it("a poll carries its options and a 32-byte messageSecret; the stanza type is poll", async () => {
    const { sock, bob } = await aliceAndBob()
    const { sent, received } = await sendToBob(sock, bob, { poll: { name: "Lunch?", values: ["Pizza", "Sushi"], selectableCount: 1 } })
    expect(received.kind).toBe("poll")
    expect(received.message.pollCreationMessageV3).toMatchObject({ name: "Lunch?", selectableOptionsCount: 1, options: [{ optionName: "Pizza" }, { optionName: "Sushi" }] })
    const secret = received.message.messageContextInfo?.messageSecret
    expect(secret?.length).toBe(32)
    expect(Buffer.from(secret!).equals(Buffer.from(sent.message!.messageContextInfo!.messageSecret!))).toBe(true)
    // several choices: the V1 poll
    const multi = await sendToBob(sock, bob, { poll: { name: "Days", values: ["Mon", "Tue", "Wed"], selectableCount: 2 } })
    expect(multi.received.message.pollCreationMessage).toMatchObject({ name: "Days", selectableOptionsCount: 2 })
  })

  it("a link preview's fields and a forward's isForwarded arrive as sent", async () => {
    const { sock, bob } = await aliceAndBob()
    const thumbnail = randomBytes(40)
    const { received } = await sendToBob(sock, bob, {
      text: "see https://example.org/a",
      linkPreview: { "canonical-url": "https://example.org/a", "matched-text": "https://example.org/a", title: "Example", description: "A page", jpegThumbnail: thumbnail }
    })
    expect(received.message.extendedTextMessage).toMatchObject({ text: "see https://example.org/a", matchedText: "https://example.org/a", title: "Example", description: "A page" })
    expect(Buffer.from(received.message.extendedTextMessage!.jpegThumbnail!).equals(thumbnail)).toBe(true)
    const original = await fromBob(sock, () => bob.send(ALICE, "pass it on"))
    const forwarded = await sendToBob(sock, bob, { forward: original })
    expect(forwarded.received.text).toBe("pass it on")
    expect(contextInfoOf(forwarded.received.message)).toMatchObject({ isForwarded: true, forwardingScore: 1 })
  })

  it("an edit, a pin and a revoke name the target, with the stanza's edit attribute", async () => {
    const { sock, bob } = await aliceAndBob()
    const { sent } = await sendToBob(sock, bob, { text: "tpyo" })
    // a copy: Baileys' event buffer may merge a later update (the revoke's key) into the very
    // WAMessage sendMessage returned
    const key = { ...sent.key }
    const targetId = key.id!
    const edit = await sendToBob(sock, bob, { text: "typo", edit: key })
    expect(edit.received).toMatchObject({ kind: "edit", edit: "1", target: targetId, editedText: "typo" })
    const protocol = contentOf(edit.received.message).protocolMessage!
    expect(protocol).toMatchObject({ type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT, key: { id: targetId, fromMe: true }, editedMessage: { extendedTextMessage: { text: "typo" } } })
    const pin = await sendToBob(sock, bob, { pin: key, type: proto.PinInChat.Type.PIN_FOR_ALL, time: 604800 })
    expect(pin.received).toMatchObject({ kind: "pin", edit: "2", target: targetId })
    expect(pin.received.message.pinInChatMessage).toMatchObject({ key: { id: targetId }, type: proto.Message.PinInChatMessage.Type.PIN_FOR_ALL })
    expect(pin.received.message.messageContextInfo?.messageAddOnDurationInSecs).toBe(604800)
    const revoke = await sendToBob(sock, bob, { delete: key })
    expect(revoke.received).toMatchObject({ kind: "revoke", edit: "7", target: targetId })
    expect(revoke.received.message.protocolMessage).toMatchObject({ type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: targetId } })
  })
})

describe("wa-peer kinds: contact → client, read back by Baileys", () => {
  it("a location, contact cards and a sticker Baileys downloads", async () => {
    const { sock, bob } = await aliceAndBob()
    const location = await fromBob(sock, () => bob.sendLocation(ALICE, { latitude: -33.8568, longitude: 151.2153, name: "Opera House" }))
    expect(location.message?.locationMessage).toMatchObject({ degreesLatitude: -33.8568, degreesLongitude: 151.2153, name: "Opera House" })
    const card = await fromBob(sock, () => bob.sendContacts(ALICE, [{ name: "Carol", phone: "+1 555 123 0003", organization: "Acme" }]))
    expect(card.message?.contactMessage?.displayName).toBe("Carol")
    expect(card.message?.contactMessage?.vcard).toContain("TEL;type=CELL;type=VOICE;waid=15551230003:+15551230003")
    expect(card.message?.contactMessage?.vcard).toContain("ORG:Acme")
    const cards = await fromBob(sock, () => bob.sendContacts(ALICE, [{ name: "Carol", phone: "15551230003" }, { name: "Dave", phone: "15551230004" }]))
    expect(cards.message?.contactsArrayMessage?.contacts?.map(c => c.displayName)).toEqual(["Carol", "Dave"])
    const bytes = await webp()
    const sticker = await fromBob(sock, () => bob.sendSticker(ALICE, { bytes }))
    expect(sticker.message?.stickerMessage).toMatchObject({ mimetype: "image/webp", isAnimated: false })
    expect((await downloadMediaMessage(sticker, "buffer", { options: loopback.clients.fetchOptions })).equals(bytes)).toBe(true)
  })

  it("a forwarded text and a text with a link preview keep their fields", async () => {
    const { sock, bob } = await aliceAndBob()
    const forwarded = await fromBob(sock, () => bob.sendMessage(ALICE, forwardedMessage({ conversation: "pass it on" }, 4)))
    expect(forwarded.message?.extendedTextMessage).toMatchObject({ text: "pass it on", contextInfo: { isForwarded: true, forwardingScore: 4 } })
    const preview = await fromBob(sock, () =>
      bob.sendMessage(ALICE, linkPreviewMessage({ text: "look https://example.org", url: "https://example.org", title: "Example", description: "A page" }))
    )
    expect(preview.message?.extendedTextMessage).toMatchObject({ text: "look https://example.org", matchedText: "https://example.org", title: "Example", description: "A page" })
  })

  it("an edit and a revoke surface as messages.update on the target", async () => {
    const { sock, bob } = await aliceAndBob()
    const original = await fromBob(sock, () => bob.send(ALICE, "tpyo"))
    const targetId = original.key.id!
    const edited = onEvent(sock, "messages.update", us => us.some(u => u.key.id === targetId && !!u.update.message), "the edit")
    await bob.edit(ALICE, targetId, "typo")
    const edit = (await edited).find(u => u.key.id === targetId)!
    expect(edit.key).toMatchObject({ remoteJid: bob.lid, fromMe: false })
    expect(edit.update.message?.editedMessage?.message?.conversation).toBe("typo")
    const revoked = onEvent(sock, "messages.update", us => us.some(u => u.key.id === targetId && u.update.messageStubType === proto.WebMessageInfo.StubType.REVOKE), "the revoke")
    await bob.revoke(ALICE, targetId)
    expect((await revoked).find(u => u.key.id === targetId)?.update.message).toBeNull()
    // only the sender edits or revokes: Bob cannot touch Alice's message
    const { sent } = await sendToBob(sock, bob, { text: "mine" })
    await expect(bob.edit(ALICE, sent.key.id!, "hacked")).rejects.toThrow(/only the sender/)
  })

  it("a pin names the target as Bob sees it", async () => {
    const { sock, bob } = await aliceAndBob()
    const targetId = (await sendToBob(sock, bob, { text: "pin me" })).sent.key.id!
    const pin = await fromBob(sock, () => bob.pin(ALICE, targetId, { durationSeconds: 604_800 }))
    expect(pin.message?.pinInChatMessage).toMatchObject({ key: { id: targetId, fromMe: false }, type: proto.Message.PinInChatMessage.Type.PIN_FOR_ALL })
    expect(pin.message?.messageContextInfo?.messageAddOnDurationInSecs).toBe(604_800)
    const unpin = await fromBob(sock, () => bob.pin(ALICE, targetId, { pinned: false }))
    expect(unpin.message?.pinInChatMessage?.type).toBe(proto.Message.PinInChatMessage.Type.UNPIN_FOR_ALL)
  })

  it("a poll from Bob keeps its secret; a vote on it comes back through contact.votes()", async () => {
    const { sock, bob } = await aliceAndBob()
    const poll = await fromBob(sock, () => bob.sendPoll(ALICE, { name: "Lunch?", options: ["Pizza", "Sushi"] }))
    const pollId = poll.key.id!
    expect(poll.message?.pollCreationMessageV3).toMatchObject({ name: "Lunch?", selectableOptionsCount: 1 })
    const secret = poll.message!.messageContextInfo!.messageSecret!
    expect(Buffer.from(secret).equals(bob.polls.get(pollId)!.secret)).toBe(true)
    // Alice's client votes as an engine would: sealed here with Baileys' primitives, LID-addressed
    const alice = loopback.peer.accounts.get(ALICE)!
    const [creatorJid, voterJid] = [bob.lid, `${alice.lidUser}@lid`]
    const info = Buffer.concat([Buffer.from(pollId), Buffer.from(creatorJid), Buffer.from(voterJid), Buffer.from("Poll Vote"), Buffer.from([1])])
    const key = hmacSign(info, hmacSign(secret, new Uint8Array(32)))
    const encIv = randomBytes(12)
    const encPayload = aesEncryptGCM(proto.Message.PollVoteMessage.encode({ selectedOptions: [sha256("Sushi")] }).finish(), key, encIv, Buffer.from(`${pollId}\u0000${voterJid}`))
    const voteId = "3EB0" + randomBytes(8).toString("hex").toUpperCase()
    await sock.relayMessage(bob.jid, { pollUpdateMessage: { pollCreationMessageKey: poll.key, vote: { encPayload, encIv }, senderTimestampMs: Date.now() } }, { messageId: voteId })
    const received = await receivedById(voteId)
    expect(received).toMatchObject({ kind: "poll-vote", target: pollId })
    expect(bob.votes()).toEqual([{ id: voteId, pollId, from: ALICE, options: ["Sushi"], unknown: 0, creator: "lid", voter: "lid" }])
  })
})

describe("wa-peer kinds: poll votes Bob casts on Alice's poll", () => {
  it("are sealed with the poll's secret as Baileys' decryptPollVote opens them, LID or PN", async () => {
    const { sock, bob } = await aliceAndBob()
    const { sent } = await sendToBob(sock, bob, { poll: { name: "Lunch?", values: ["Pizza", "Sushi", "Salad"], selectableCount: 0 } })
    const pollId = sent.key.id!
    const pollEncKey = sent.message!.messageContextInfo!.messageSecret!
    const alice = loopback.peer.accounts.get(ALICE)!
    const open = (vote: WAMessage, creatorJid: string, voterJid: string) =>
      decryptPollVote(vote.message!.pollUpdateMessage!.vote!, { pollCreatorJid: creatorJid, pollMsgId: pollId, pollEncKey, voterJid })

    const vote = await fromBob(sock, () => bob.vote(ALICE, pollId, ["Sushi", "Salad"]))
    // Baileys flips the poll key to its own view: Alice's poll
    expect(vote.message?.pollUpdateMessage?.pollCreationMessageKey).toMatchObject({ id: pollId, fromMe: true })
    expect(open(vote, `${alice.lidUser}@lid`, bob.lid).selectedOptions.map(h => Buffer.from(h))).toEqual([sha256("Sushi"), sha256("Salad")])
    // sealed for LID JIDs, it does not open under the phone JIDs
    expect(() => open(vote, `${ALICE}@s.whatsapp.net`, bob.jid)).toThrow()

    const pnVote = await fromBob(sock, () => bob.vote(ALICE, pollId, ["Pizza"], { addressing: "pn" }))
    expect(open(pnVote, `${ALICE}@s.whatsapp.net`, bob.jid).selectedOptions.map(h => Buffer.from(h))).toEqual([sha256("Pizza")])

    const withdrawn = await fromBob(sock, () => bob.vote(ALICE, pollId, []))
    expect(open(withdrawn, `${alice.lidUser}@lid`, bob.lid).selectedOptions).toEqual([])
  })
})

describe("wa-peer kinds: presence", () => {
  it("Bob's chatstates reach presence.update: composing, recording, paused (= available)", async () => {
    const { sock, bob } = await aliceAndBob()
    await fromBob(sock, () => bob.send(ALICE, "hi"))
    for (const [state, expected] of [["composing", "composing"], ["recording", "recording"], ["paused", "available"]] as const) {
      const update = onEvent(sock, "presence.update", u => u.id === bob.lid && u.presences[bob.lid]?.lastKnownPresence === expected, `presence ${state}`)
      expect(bob.sendChatstate(ALICE, state)).toBe(1)
      await update
    }
    const byPhone = onEvent(sock, "presence.update", u => u.id === bob.jid, "a chatstate from the phone JID")
    bob.sendChatstate(ALICE, "composing", { addressing: "pn" })
    expect((await byPhone).presences[bob.jid]?.lastKnownPresence).toBe("composing")
  })

  it("a subscription is recorded and answered; Bob's presence then reaches the subscriber with lastSeen", async () => {
    const { sock, bob } = await aliceAndBob()
    // nobody subscribed yet: the server tells no one
    expect(bob.setPresence({ type: "available" })).toBe(0)
    const answered = onEvent(sock, "presence.update", u => u.id === bob.jid, "the answer to the subscription")
    await sock.presenceSubscribe(bob.jid)
    expect((await answered).presences[bob.jid]).toMatchObject({ lastKnownPresence: "available" })
    expect(bob.subscribers()).toEqual([ALICE])
    const lastSeen = Math.floor(Date.now() / 1000) - 60
    const offline = onEvent(sock, "presence.update", u => u.presences[bob.jid]?.lastKnownPresence === "unavailable", "Bob going offline")
    expect(bob.setPresence({ type: "unavailable", lastSeen })).toBe(1)
    expect((await offline).presences[bob.jid]?.lastSeen).toBe(lastSeen)
  })

  it("Alice's chatstates to Bob are recorded; her online / offline only once she has a name", async () => {
    const { sock, bob } = await aliceAndBob()
    for (const state of ["composing", "recording", "paused"] as const) {
      const said = loopback.peer.waitFor<ClientPresence>("presence", p => p.kind === "chatstate" && p.state === state)
      await sock.sendPresenceUpdate(state, bob.jid)
      await said
    }
    expect(bob.chatstates()).toEqual(["composing", "recording", "paused"])
    expect(loopback.peer.presences.filter(p => p.kind === "chatstate").map(p => p.phone)).toEqual([ALICE, ALICE, ALICE])
    // without creds.me.name Baileys drops online / offline without a word (the chatstate after
    // it, on the same socket, shows the peer would have seen it by then)
    await sock.sendPresenceUpdate("available")
    const after = loopback.peer.waitFor<ClientPresence>("presence", p => p.kind === "chatstate" && p.state === "composing")
    await sock.sendPresenceUpdate("composing", bob.jid)
    await after
    expect(loopback.peer.presences.filter(p => p.kind === "presence" && p.type !== undefined)).toEqual([])
  })

  it("with a business name from the pairing, Baileys sends online and offline", async () => {
    const named = await loopback.clients.pair(ALICE, {}, { businessName: "Alice's Shop" })
    expect(named.auth.creds.me?.name).toBe("Alice's Shop")
    for (const type of ["available", "unavailable"] as const) {
      const said = loopback.peer.waitFor<ClientPresence>("presence", p => p.kind === "presence" && p.type === type)
      await named.sock.sendPresenceUpdate(type)
      expect(await said).toMatchObject({ kind: "presence", phone: ALICE, type, name: "Alice's Shop" })
    }
  })
})
