import { proto } from "@whiskeysockets/baileys"
import { beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"
import { sessionApi, useLinkedBaileysSession } from "./support/baileysSession.js"
import { contentOf, contextInfoOf, type ReceivedMessage } from "./support/wa-peer/index.js"

/**
 * Issue 17 end to end on ENGINE=baileys, part two: acting on messages already in a chat
 * (forward, edit, delete, star, pin) and presence, both ways. What the session does is the
 * WhatsApp message the contact's phone records; what the contact does changes the gateway's
 * stored copy and raises the events a webhook receives. Only the REST API drives the gateway.
 */

const ALICE = "15551230001"
const BOB = "15551230002"
const CAROL = "15551230003"
const DAVE = "15551230004"
const aliceChat = `${ALICE}@c.us`
const bobChat = `${BOB}@c.us`

describe("ENGINE=baileys: forward, edit, delete, star, pin and presence through the REST API", () => {
  // A business name: WhatsApp (and Baileys) take an account-wide presence only from a named account.
  const linked = useLinkedBaileysSession(ALICE, { businessName: "Alice" })
  const api = sessionApi(linked)
  const bob = () => linked().peer.contact(BOB, { name: "Bob" })
  const carol = () => linked().peer.contact(CAROL, { name: "Carol" })
  beforeAll(() => void [bob(), carol()])

  /** The session texts Bob; the gateway's id and the message as Bob's phone has it. */
  const textBob = (text: string) => api.sendTo(BOB, "/messages/send-text", { chatId: BOB, text }, (m) => m.text === text)
  /** Bob texts the session; his id and the gateway's stored copy. */
  const bobTexts = async (text: string) => {
    const wireId = await bob().send(ALICE, text)
    return { wireId, stored: await api.receivedFrom(BOB, (m) => m.text === text) }
  }
  /** What the session's action on message `target` made Bob's phone record. */
  const recordedByBob = (kind: ReceivedMessage["kind"], target: string) =>
    linked().peer.waitFor<ReceivedMessage>("received", (m) => m.to === BOB && m.kind === kind && m.target === target, 15_000)

  it("forward: the other contact gets the text, location or photo again, marked forwarded in its contextInfo", async () => {
    const { stored } = await bobTexts("worth sharing")
    const forwarded = await api.sendTo(CAROL, `/messages/${stored.id}/forward`, { chatId: CAROL }, (m) => m.text === "worth sharing")
    expect(forwarded.messageId).not.toBe(stored.id)
    expect(contextInfoOf(forwarded.received.message)).toMatchObject({ isForwarded: true })
    expect((await api.message(forwarded.messageId)).body).toMatchObject({ chatId: `${CAROL}@c.us`, text: "worth sharing", forwarded: true, fromMe: true })

    const location = await api.sendTo(BOB, "/messages/send-location", { chatId: BOB, latitude: 1.5, longitude: 2.5, name: "Here" }, (m) => m.kind === "location")
    const again = await api.sendTo(CAROL, `/messages/${location.messageId}/forward`, { chatId: CAROL }, (m) => m.kind === "location")
    expect(again.received.message.locationMessage).toMatchObject({ degreesLatitude: 1.5, degreesLongitude: 2.5, name: "Here", contextInfo: { isForwarded: true } })

    // Media: the bytes the gateway kept of Bob's photo reach Carol, forwarded.
    const photo = png("bob's photo")
    await bob().sendMedia(ALICE, { kind: "image", bytes: photo, mimetype: "image/png", caption: "look" })
    const image = await api.receivedFrom(BOB, (m) => m.type === "image" && m.caption === "look")
    const shared = await api.sendTo(CAROL, `/messages/${image.id}/forward`, { chatId: CAROL }, (m) => m.media === "image")
    expect(shared.received.message.imageMessage).toMatchObject({ caption: "look", contextInfo: { isForwarded: true } })
    expect((await linked().peer.downloadMedia(shared.received)).bytes.equals(Buffer.from(photo))).toBe(true)
  })

  it("edit: the contact records a MESSAGE_EDIT of its copy with the new text; the sent copy keeps the old one", async () => {
    const { messageId, received } = await textBob("see you at 5")
    const recorded = recordedByBob("edit", received.id)
    const edited = await api.put(`/messages/${messageId}`, { text: "see you at 6" })
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ id: messageId, text: "see you at 6", edits: [{ text: "see you at 5" }] })
    const edit = await recorded
    expect(edit).toMatchObject({ edit: "1", editedText: "see you at 6" })
    expect(contentOf(edit.message).protocolMessage?.type).toBe(proto.Message.ProtocolMessage.Type.MESSAGE_EDIT)
    await api.delivered("message.edited", (data) => data.messageId === messageId && data.by === aliceChat)

    // A caption: the edit carries a message of the media's kind holding only the new caption.
    const photo = await api.sendTo(BOB, "/messages/send-image", { chatId: BOB, media: { data: base64(png("captioned")) }, caption: "before" }, (m) => m.media === "image")
    const captionRecorded = recordedByBob("edit", photo.received.id)
    const recaptioned = await api.put(`/messages/${photo.messageId}`, { text: "after" })
    expect(recaptioned.body).toMatchObject({ caption: "after", edits: [{ text: "before" }] })
    expect((await captionRecorded).editedText).toBe("after")
  })

  it("the contact's edit changes the stored copy, keeps the old text in edits, and raises message.edited", async () => {
    const { stored, wireId } = await bobTexts("meet at noon")
    await bob().edit(ALICE, wireId, "meet at one")
    const copy = await eventually(() => api.message(stored.id), (r) => r.body.text === "meet at one", 15_000)
    expect(copy.body.edits.map((e: { text: string }) => e.text)).toEqual(["meet at noon"])
    expect(copy.body.editedAt).not.toBeNull()
    const [event] = await api.delivered("message.edited", (data) => data.messageId === stored.id)
    expect(event!.data).toEqual({ messageId: stored.id, chatId: bobChat, text: "meet at one", previousText: "meet at noon", by: bobChat })
  })

  it("delete for everyone: the contact records a REVOKE of its copy", async () => {
    const { messageId, received } = await textBob("oops, wrong chat")
    const recorded = recordedByBob("revoke", received.id)
    const deleted = await api.del(`/messages/${messageId}`)
    expect(deleted.body).toMatchObject({ id: messageId, revoked: true, text: null })
    const revoke = await recorded
    expect(revoke.edit).toBe("7")
    expect(contentOf(revoke.message).protocolMessage).toMatchObject({ type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: received.id } })
  })

  it("the contact's revoke marks the stored copy revoked, clears its text, and raises message.revoked", async () => {
    const { stored, wireId } = await bobTexts("forget I said this")
    await bob().revoke(ALICE, wireId)
    const copy = await eventually(() => api.message(stored.id), (r) => r.body.revoked === true, 15_000)
    expect(copy.body.text).toBeNull()
    const [event] = await api.delivered("message.revoked", (data) => data.messageId === stored.id)
    expect(event!.data).toEqual({ messageId: stored.id, chatId: bobChat, by: bobChat })

    // A photo's bytes go with it (KEEP_REVOKED_MEDIA is off).
    const photoId = await bob().sendMedia(ALICE, { kind: "image", bytes: png("regretted"), mimetype: "image/png", caption: "regretted" })
    const photo = await api.receivedFrom(BOB, (m) => m.caption === "regretted")
    expect((await api.get(`/messages/${photo.id}/media`)).status).toBe(200)
    await bob().revoke(ALICE, photoId)
    const gone = await eventually(() => api.message(photo.id), (r) => r.body.revoked === true, 15_000)
    expect(gone.body).toMatchObject({ caption: null, media: null })
    expect((await api.get(`/messages/${photo.id}/media`)).status).toBe(404)
  })

  it("star: app state the phone has not shared keys for (the peer syncs none) → 409, and the message stays unstarred", async () => {
    const { stored } = await bobTexts("star me")
    const starred = await api.post(`/messages/${stored.id}/star`, { starred: true })
    expect([starred.status, starred.body.code]).toEqual([409, "APP_STATE_NOT_READY"])
    expect((await api.message(stored.id)).body.starred).toBe(false)
  })

  it("pin: the contact records a pinInChatMessage for its copy with the duration; unpin too", async () => {
    const { messageId, received } = await textBob("pin this")
    const recorded = recordedByBob("pin", received.id)
    const pinned = await api.post(`/messages/${messageId}/pin`, { pinned: true, durationHours: 168 })
    expect([pinned.status, pinned.body.pinned]).toEqual([200, true])
    const pin = await recorded
    expect(pin.edit).toBe("2")
    expect(contentOf(pin.message).pinInChatMessage?.type).toBe(proto.Message.PinInChatMessage.Type.PIN_FOR_ALL)
    expect(pin.message.messageContextInfo?.messageAddOnDurationInSecs).toBe(7 * 24 * 3600)

    const unrecorded = linked().peer.waitFor<ReceivedMessage>(
      "received",
      (m) => m.kind === "pin" && m.target === received.id && contentOf(m.message).pinInChatMessage?.type === proto.Message.PinInChatMessage.Type.UNPIN_FOR_ALL,
      15_000
    )
    const unpinned = await api.post(`/messages/${messageId}/pin`, { pinned: false })
    expect([unpinned.status, unpinned.body.pinned]).toEqual([200, false])
    await unrecorded
  })

  it("the contact's pin marks the stored copy pinned, and its unpin clears it", async () => {
    const { stored, wireId } = await bobTexts("pinned by bob")
    await bob().pin(ALICE, wireId, { pinned: true })
    await eventually(() => api.message(stored.id), (r) => r.body.pinned === true, 15_000)
    await bob().pin(ALICE, wireId, { pinned: false })
    await eventually(() => api.message(stored.id), (r) => r.body.pinned === false, 15_000)

    // A pin of the session's own message, as Bob's phone names it (not fromMe from his side).
    const { messageId, received } = await textBob("bob pins mine")
    await bob().pin(ALICE, received.id, { pinned: true })
    await eventually(() => api.message(messageId), (r) => r.body.pinned === true, 15_000)
  })

  it("presence out: typing, recording and paused reach the contact as chatstates; online as the account's presence", async () => {
    for (const state of ["typing", "recording", "paused"]) {
      const set = await api.post("/presence", { chatId: `+${BOB}`, state })
      expect(set.status).toBe(200)
    }
    await eventually(async () => bob().chatstates(), (states) => states.join(",") === "composing,recording,paused", 15_000)

    const online = await api.post("/presence", { state: "online" })
    expect(online.status).toBe(200)
    await eventually(
      async () => linked().peer.presences.filter((p) => p.kind === "presence" && p.phone === ALICE && p.type === "available"),
      (found) => found.length > 0,
      15_000
    )
  })

  it("presence in: after subscribing, the contact's online, typing and offline show under its phone chat id, as presence.update events", async () => {
    const subscribed = await api.post("/presence/subscribe", { chatId: `+${BOB}` })
    expect(subscribed.body).toEqual({ chatId: bobChat, subscribed: true })
    await eventually(async () => bob().subscribers(), (phones) => phones.includes(ALICE), 15_000)
    const presence = () => api.get(`/presence/${BOB}`)

    bob().setPresence({ type: "available" })
    const online = await eventually(presence, (r) => r.body.state === "online", 15_000)
    expect(online.body).toMatchObject({ chatId: bobChat, state: "online" })
    await api.delivered("presence.update", (data) => data.chatId === bobChat && data.state === "online")

    // Sent from Bob's LID, as WhatsApp does in LID-addressed chats: shown under his phone.
    bob().sendChatstate(ALICE, "composing")
    await eventually(presence, (r) => r.body.state === "typing", 15_000)
    await api.delivered("presence.update", (data) => data.chatId === bobChat && data.state === "typing")

    const lastSeen = Math.floor(Date.now() / 1000) - 60
    bob().setPresence({ type: "unavailable", lastSeen })
    const offline = await eventually(presence, (r) => r.body.state === "offline", 15_000)
    expect(offline.body).toMatchObject({ chatId: bobChat, lastSeen: new Date(lastSeen * 1000).toISOString() })
    await api.delivered("presence.update", (data) => data.chatId === bobChat && data.state === "offline")

    // Nothing was heard under the LID.
    const lidKnown = await api.get(`/presence/${encodeURIComponent(bob().lid)}`)
    expect(lidKnown.status).toBe(404)
  })

  it("presence in from a contact never written to: subscribing learns its LID, so its typing shows under its phone", async () => {
    const dave = linked().peer.contact(DAVE, { name: "Dave" })
    expect((await api.post("/presence/subscribe", { chatId: DAVE })).status).toBe(200)
    await eventually(async () => dave.subscribers(), (phones) => phones.includes(ALICE), 15_000)
    dave.sendChatstate(ALICE, "composing")
    await api.delivered("presence.update", (data) => data.chatId === `${DAVE}@c.us` && data.state === "typing")
    expect((await api.get(`/presence/${DAVE}`)).body).toMatchObject({ chatId: `${DAVE}@c.us`, state: "typing" })
    expect(linked().hooks.problems).toEqual([])
    expect(linked().peer.errors).toEqual([])
  })
})
