import { proto } from "@whiskeysockets/baileys"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { defaultSessionSettings } from "../src/domain/SessionSettings.js"
import type { EngineEvent } from "../src/runtime/Engine.js"
import { baileysAgainst, eventOf, type Linked } from "./support/baileysEngineLink.js"
import { type CallReject, pnJid, type PhoneChat, type ReceivedStatus, startWaPeer, type WaPeer } from "./support/wa-peer/index.js"
import { muteSignalChatter } from "./support/wa-peer/raw-client.js"

/**
 * Issue 18 on the Baileys engine against the loopback WhatsApp Web peer, at the engine boundary:
 * the phone's history sync and on-demand history, calls offered by a contact and rejected,
 * status updates both ways, the session's connection settings, and chat events the peer
 * can raise (a group the account is added to). What needs app state the peer does not carry
 * (archive, pin, mute, unread, delete) is proven at the socket boundary in
 * baileys-chats.test.ts; here only its refusal while the phone has shared no app-state keys.
 */

const ALICE = "15551230001"
const BOB = "15551230002"
const CAROL = "15551230003"
const DAVE = "15551230004"
const ERIN = "15551230005"
const aliceChat = `${ALICE}@c.us`
const bobChat = `${BOB}@c.us`
const carolChat = `${CAROL}@c.us`

const HOUR = 3600
const now = Math.floor(Date.now() / 1000)
const MUTED_UNTIL_MS = (now + 8 * HOUR) * 1000

/** What Alice's phone holds: a chat with Bob (three messages both ways), and an archived one with Carol. */
const phoneChats: ReadonlyArray<PhoneChat> = [
  {
    jid: pnJid(BOB),
    name: "Bob",
    unreadCount: 1,
    pinned: true,
    mutedUntilMs: MUTED_UNTIL_MS,
    messages: [
      { id: "3EB0H1STOLDEST", fromMe: false, text: "first, long ago", at: now - 3 * HOUR },
      { id: "3EB0H1STMIDDLE", fromMe: true, text: "sent from my phone", at: now - 2 * HOUR },
      { id: "3EB0H1STNEWEST", fromMe: false, text: "newest", at: now - HOUR }
    ]
  },
  { jid: pnJid(CAROL), name: "Carol", archived: true, messages: [{ id: "3EB0H1STCAROL", fromMe: false, text: "hi from carol", at: now - 5 * HOUR }] }
]

describe("BaileysEngine against the loopback peer: history, calls, status updates, settings", () => {
  let peer: WaPeer
  let engine: ReturnType<typeof baileysAgainst>
  let alice: Linked
  let unmute: () => void

  beforeAll(async () => {
    unmute = muteSignalChatter()
    peer = await startWaPeer()
    engine = baileysAgainst(peer)
    peer.contact(BOB, { name: "Bob" })
    peer.contact(CAROL, { name: "Carol" })
    alice = await engine.link({ phone: ALICE })
  }, 30_000)

  afterAll(async () => {
    await engine?.close()
    await peer?.close()
    unmute?.()
  })

  const history = (linked: Linked, onDemand: boolean) => eventOf(linked, "HistoryReceived", (e) => e.batch.onDemand === onDemand, 15_000).then((e) => e.batch)

  describe("history", () => {
    it("the phone's sync on linking is one batch: its chats as the list shows them, messages both ways (the phone's own marked fromMe)", async () => {
      await peer.syncHistory(ALICE, phoneChats, { progress: 100 })
      const batch = await history(alice, false)
      expect(batch.progress).toBe(100)
      expect(batch.chats).toEqual(expect.arrayContaining([
        { chatId: bobChat, name: "Bob", unreadCount: 1, pinned: true, mutedUntil: new Date(MUTED_UNTIL_MS) },
        expect.objectContaining({ chatId: carolChat, name: "Carol", archived: true })
      ]))
      const byId = new Map(batch.messages.map((m) => [m.engineMessageId, m]))
      expect(byId.get("3EB0H1STMIDDLE")).toMatchObject({ chatId: bobChat, from: aliceChat, fromMe: true, type: "text", text: "sent from my phone" })
      expect(byId.get("3EB0H1STNEWEST")).toMatchObject({ chatId: bobChat, from: bobChat, type: "text", text: "newest" })
      expect(byId.get("3EB0H1STNEWEST")?.fromMe).toBeUndefined()
      expect(byId.get("3EB0H1STCAROL")).toMatchObject({ chatId: carolChat, from: carolChat, text: "hi from carol" })
      expect(byId.get("3EB0H1STOLDEST")?.timestamp).toEqual(new Date((now - 3 * HOUR) * 1000))
      // history is no live traffic
      expect(alice.events.filter((e) => e._tag === "MessageReceived" && e.message.engineMessageId.startsWith("3EB0H1ST"))).toEqual([])
    })

    it("on demand: the request names the chat's oldest message held; the phone's older messages come back as an on-demand batch", async () => {
      // the phone holds more of Bob's chat than its sync on linking sent
      const older = [
        { id: "3EB0H1STOLDER", fromMe: true, text: "older still", at: now - 4 * HOUR },
        { id: "3EB0H1STOLDER2", fromMe: false, text: "the very first", at: now - 5 * HOUR }
      ]
      peer.phoneHistory.set(ALICE, phoneChats.map((chat) => chat.jid === pnJid(BOB) ? { ...chat, messages: [...chat.messages, ...older] } : chat))
      const requested = peer.waitFor("history-request", () => true, 10_000)
      await engine.run(alice.connection.chats.requestHistory(bobChat, 1, {
        target: { engineMessageId: "3EB0H1STOLDEST", fromMe: false, from: bobChat },
        timestamp: new Date((now - 3 * HOUR) * 1000)
      }))
      expect(await requested).toEqual({
        phone: ALICE,
        chatJid: pnJid(BOB),
        count: 1,
        oldestMsgId: "3EB0H1STOLDEST",
        oldestMsgFromMe: false,
        oldestMsgTimestampMs: (now - 3 * HOUR) * 1000
      })
      const batch = await history(alice, true)
      expect(batch.messages.map((m) => [m.engineMessageId, m.chatId, m.from, m.fromMe, m.text]))
        .toEqual([["3EB0H1STOLDER", bobChat, aliceChat, true, "older still"]])
    })

    it("on demand without a message to ask before is refused as invalid", async () => {
      expect(await engine.refusal(alice.connection.chats.requestHistory(bobChat, 5, null)))
        .toEqual({ code: "NO_HISTORY_ANCHOR", refusal: "invalid", transient: false })
    })

    it("historySync off imports nothing the phone syncs; recent leaves out a FULL sync", async () => {
      const dave = await engine.link({ phone: DAVE }, defaultSessionSettings("off"))
      await peer.syncHistory(DAVE, phoneChats)
      await peer.syncHistory(ALICE, phoneChats, { syncType: "FULL" })
      // a message after the syncs: by the time it is reported, they were processed
      const bob = peer.contact(BOB)
      const [toDave, toAlice] = [await bob.send(DAVE, "after the sync"), await bob.send(ALICE, "after the full sync")]
      await eventOf(dave, "MessageReceived", (e) => e.message.engineMessageId === toDave)
      await eventOf(alice, "MessageReceived", (e) => e.message.engineMessageId === toAlice)
      expect(dave.events.filter((e) => e._tag === "HistoryReceived")).toEqual([])
      expect(alice.events.filter((e) => e._tag === "HistoryReceived" && !e.batch.onDemand)).toHaveLength(1)
    }, 30_000)

    it("historySync full imports the FULL sync too", async () => {
      const FRANK = "15551230007"
      const frank = await engine.link({ phone: FRANK }, defaultSessionSettings("full"))
      await peer.syncHistory(FRANK, phoneChats, { syncType: "FULL", progress: 30 })
      const batch = await history(frank, false)
      expect(batch.progress).toBe(30)
      expect(batch.messages.map((m) => m.engineMessageId).sort()).toEqual(["3EB0H1STCAROL", "3EB0H1STMIDDLE", "3EB0H1STNEWEST", "3EB0H1STOLDEST"])
    }, 30_000)
  })

  describe("calls", () => {
    const bob = () => peer.contact(BOB)
    const callEvent = (callId: string, status: string) =>
      eventOf(alice, "CallChanged", (e) => e.call.callId === callId && e.call.status === status).then((e) => e.call)
    const callStatuses = (callId: string) =>
      alice.events.flatMap((e: EngineEvent) => (e._tag === "CallChanged" && e.call.callId === callId ? [e.call.status] : []))

    it("a contact's video call rings as an offer from their phone id; the reject reaches the server naming the caller as offered", async () => {
      const callId = peer.offerCall(bob(), ALICE, { isVideo: true })
      const offer = await callEvent(callId, "offer")
      expect(offer).toMatchObject({ callId, from: bobChat, isVideo: true, isGroup: false })
      const rejected = peer.waitFor<CallReject>("call-reject", (r) => r.callId === callId)
      await engine.run(alice.connection.calls.reject(callId, bobChat))
      expect(await rejected).toEqual({ phone: ALICE, callId, creator: bob().lid, to: bob().lid })
      // the caller's side ends it: no news after the gateway's own reject
      peer.endCall(bob(), ALICE, callId, "hangup")
      expect(await engine.refusal(alice.connection.calls.reject(callId, bobChat)))
        .toEqual({ code: "CALL_NOT_RINGING", refusal: "conflict", transient: false })
      expect(callStatuses(callId)).toEqual(["offer"])
    })

    it("hung up before anyone answered: missed; unanswered: timeout; taken on the phone: accept, and its end is no news", async () => {
      const missed = peer.offerCall(bob(), ALICE)
      expect((await callEvent(missed, "offer")).isVideo).toBe(false)
      peer.endCall(bob(), ALICE, missed, "hangup")
      await callEvent(missed, "missed")

      const unanswered = peer.offerCall(bob(), ALICE)
      peer.endCall(bob(), ALICE, unanswered, "timeout")
      await callEvent(unanswered, "timeout")

      const answered = peer.offerCall(bob(), ALICE)
      peer.endCall(bob(), ALICE, answered, "accept")
      await callEvent(answered, "accept")
      peer.endCall(bob(), ALICE, answered, "hangup")
      const later = peer.offerCall(bob(), ALICE)
      await callEvent(later, "offer")
      expect([callStatuses(missed), callStatuses(unanswered), callStatuses(answered)])
        .toEqual([["offer", "missed"], ["offer", "timeout"], ["offer", "accept"]])
    })
  })

  describe("status updates", () => {
    const mine = (engineMessageId: string) => ({ engineMessageId, fromMe: true, from: aliceChat })

    it("a text status reaches exactly its audience, with its background and font; its revoke reaches them too", async () => {
      const posted = peer.waitFor<ReceivedStatus>("status", (s) => s.id === "3EB0STATUS1", 10_000)
      await engine.run(alice.connection.send({
        engineMessageId: "3EB0STATUS1",
        chatId: "status@broadcast",
        content: { type: "text", text: "out for lunch", statusStyle: { backgroundColor: "#FF8800", font: 2 } },
        statusAudience: [bobChat, carolChat]
      }))
      const status = await posted
      expect([...status.participants].sort()).toEqual([BOB, CAROL])
      expect([...status.readers].sort()).toEqual([BOB, CAROL])
      expect(status.text).toBe("out for lunch")
      expect(status.message.extendedTextMessage).toMatchObject({ text: "out for lunch", backgroundArgb: 0xFFFF8800, font: 2 })

      const revoked = peer.waitFor<ReceivedStatus>("status", (s) => s.edit === "7", 10_000)
      await engine.run(alice.connection.messages.revoke("status@broadcast", mine("3EB0STATUS1")))
      const revoke = await revoked
      expect(revoke.message.protocolMessage).toMatchObject({ type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: "3EB0STATUS1", fromMe: true } })
      expect([...revoke.readers].sort()).toEqual([BOB, CAROL])
    })

    it("a contact's status update arrives under status@broadcast from the contact's phone id", async () => {
      const id = await peer.postStatus(peer.contact(CAROL), [ALICE], "at the beach")
      const { message } = await eventOf(alice, "MessageReceived", (e) => e.message.engineMessageId === id)
      expect(message).toMatchObject({ chatId: "status@broadcast", from: carolChat, fromPhone: carolChat, fromLid: peer.contact(CAROL).lid, type: "text", text: "at the beach" })
    })

    it("a status for one contact is not given to the others", async () => {
      const posted = peer.waitFor<ReceivedStatus>("status", (s) => s.id === "3EB0STATUS2", 10_000)
      await engine.run(alice.connection.send({ engineMessageId: "3EB0STATUS2", chatId: "status@broadcast", content: { type: "text", text: "just bob" }, statusAudience: [bobChat] }))
      expect((await posted).participants).toEqual([BOB])
    })
  })

  describe("chats", () => {
    it("a group the account is added to names its chat (chats.upsert → ChatsChanged)", async () => {
      const group = peer.groups.create(peer.member(BOB), "Lunch club", [peer.member(ALICE)])
      const changed = await eventOf(alice, "ChatsChanged", (e) => e.changes.some((c) => c.chatId === group.jid))
      expect(changed.changes).toContainEqual({ chatId: group.jid, name: "Lunch club" })
    })

    it("archive and the rest are app state: refused as not ready while the phone has shared no app-state keys", async () => {
      expect(await engine.refusal(alice.connection.chats.modify(bobChat, { kind: "archive", archived: true }, null)))
        .toEqual({ code: "APP_STATE_NOT_READY", refusal: "conflict", transient: true })
    })
  })

  describe("connection settings", () => {
    it("markOnlineOnConnect shows the account online as it connects; off, offline", async () => {
      await engine.link({ phone: ERIN, businessName: "Erin" }, { ...defaultSessionSettings("recent"), markOnlineOnConnect: true })
      await expect.poll(() => peer.presences.filter((p) => p.phone === ERIN && p.kind === "presence").map((p) => p.kind === "presence" && p.type), { timeout: 5_000 })
        .toContain("available")
      const CAROL_ACCOUNT = "15551230006"
      await engine.link({ phone: CAROL_ACCOUNT, businessName: "Shop" })
      const said = () => peer.presences.filter((p) => p.phone === CAROL_ACCOUNT && p.kind === "presence").map((p) => p.kind === "presence" && p.type)
      await expect.poll(said, { timeout: 5_000 }).toContain("unavailable")
      expect(said()).not.toContain("available")
    }, 30_000)
  })
})
