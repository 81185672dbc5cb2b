/**
 * Groups on the loopback WhatsApp Web peer against the REAL Baileys client: the `w:g2` queries
 * (create, metadata, participating, participants, subject, description, invites, leave), the
 * `w:gp2` notifications Baileys turns into group events, and group messages with sender keys
 * both ways.
 */
import { describe, expect, it } from "vitest"
import type { GroupMetadata, WASocket } from "@whiskeysockets/baileys"
import { type ReceivedMessage } from "./support/wa-peer/index.js"
import { onEvent, useRawPeer } from "./support/wa-peer/raw-client.js"
import { lidSender } from "./support/wa-peer/sender-keys.js"

const ALICE = "15551230001"
const BOB = "15551230002"
const CAROL = "15551230003"
const DAVE = "15551230004"

const loopback = useRawPeer()


/** The `data` of the Boom Baileys throws for an `<iq type=error>`: WhatsApp's error code. */
const iqError = async (call: Promise<unknown>) => {
  const error = (await call.then(
    () => undefined,
    (e: unknown) => e
  )) as { data?: unknown; message?: string } | undefined
  return { code: error?.data, text: error?.message }
}

/** Alice's client, with Bob a fake contact, and a group of the two that Alice created. */
const aliceWithGroup = async (subject = "Team") => {
  const { sock } = await loopback.clients.pair(ALICE)
  const bob = loopback.peer.contact(BOB, { name: "Bob" })
  const created = await sock.groupCreate(subject, [bob.jid])
  return { sock, bob, created }
}

const participantsOf = (metadata: GroupMetadata) =>
  metadata.participants.map(p => ({ id: p.id, phoneNumber: p.phoneNumber, admin: p.admin })).sort((a, b) => a.id.localeCompare(b.id))

describe("wa-peer groups: the w:g2 queries", () => {
  it("groupCreate answers with the new group's metadata, LID-addressed, the creator superadmin", async () => {
    const { sock } = await loopback.clients.pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const joined = onEvent(sock, "groups.upsert", groups => groups.length > 0, "the create notification")
    const created = await sock.groupCreate("Team", [bob.jid])
    const alice = loopback.peer.accounts.get(ALICE)!
    expect(created).toMatchObject({
      id: expect.stringMatching(/^120363\d+@g\.us$/),
      subject: "Team",
      owner: `${alice.lidUser}@lid`,
      ownerPn: `${ALICE}@s.whatsapp.net`,
      addressingMode: "lid",
      size: 2,
      announce: false,
      restrict: false
    })
    expect(created.creation).toBeGreaterThan(0)
    expect(participantsOf(created)).toEqual(expect.arrayContaining([
      { id: `${alice.lidUser}@lid`, phoneNumber: `${ALICE}@s.whatsapp.net`, admin: "superadmin" },
      { id: bob.lid, phoneNumber: bob.jid, admin: null }
    ]))
    // the server tells the members' devices (the creator's too) with a <create> notification
    const [upserted] = await joined
    expect(upserted).toMatchObject({ id: created.id, subject: "Team", author: `${alice.lidUser}@lid` })
    expect(loopback.peer.group(created.id)?.subject).toBe("Team")
  })

  it("groupMetadata and groupFetchAllParticipating read the group; unknown groups are item-not-found (404)", async () => {
    const { sock, created } = await aliceWithGroup()
    expect(await sock.groupMetadata(created.id)).toMatchObject({ id: created.id, subject: "Team", size: 2 })
    const all = await sock.groupFetchAllParticipating()
    expect(Object.keys(all)).toEqual([created.id])
    expect(await iqError(sock.groupMetadata("120363000000000000@g.us"))).toEqual({ code: 404, text: "item-not-found" })
  })

  it("participants: add, promote, demote, remove with a status per person, and the events Baileys emits", async () => {
    const { sock, bob, created } = await aliceWithGroup()
    const carol = loopback.peer.contact(CAROL)
    const added = onEvent(sock, "group-participants.update", u => u.action === "add", "the add notification")
    const results = await sock.groupParticipantsUpdate(created.id, [carol.jid, bob.jid, "15559999999@s.whatsapp.net"], "add")
    expect(results.map(({ jid, status }) => ({ jid, status }))).toEqual([
      { jid: carol.jid, status: "200" },
      { jid: bob.jid, status: "409" }, // already in
      { jid: "15559999999@s.whatsapp.net", status: "404" } // not on WhatsApp
    ])
    const alice = loopback.peer.accounts.get(ALICE)!
    // rc14 drops the notification's participant_pn (proto MessageKey has no participantAlt):
    // authorPn stays undefined, the author is the LID alone
    expect(await added).toMatchObject({
      id: created.id,
      author: `${alice.lidUser}@lid`,
      participants: [{ id: carol.lid, phoneNumber: carol.jid }]
    })
    const promoted = onEvent(sock, "group-participants.update", u => u.action === "promote", "the promote notification")
    await sock.groupParticipantsUpdate(created.id, [carol.jid], "promote")
    expect((await promoted).participants.map(p => p.id)).toEqual([carol.lid])
    expect(loopback.peer.group(created.id)?.roleOf(loopback.peer.member(CAROL))).toBe("admin")
    await sock.groupParticipantsUpdate(created.id, [carol.jid], "demote")
    const removed = onEvent(sock, "group-participants.update", u => u.action === "remove", "the remove notification")
    await sock.groupParticipantsUpdate(created.id, [bob.jid], "remove")
    expect((await removed).participants.map(p => p.id)).toEqual([bob.lid])
    const metadata = await sock.groupMetadata(created.id)
    expect(participantsOf(metadata).map(p => [p.phoneNumber, p.admin])).toEqual(
      expect.arrayContaining([[`${ALICE}@s.whatsapp.net`, "superadmin"], [carol.jid, null]])
    )
    expect(metadata.size).toBe(2)
  })

  it("a member who is no admin is refused (401 not-authorized); a non-member is forbidden (403)", async () => {
    const { sock } = await loopback.clients.pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const group = loopback.peer.groups.create(loopback.peer.member(BOB), "Bob's", [loopback.peer.member(ALICE)])
    expect(await iqError(sock.groupParticipantsUpdate(group.jid, [bob.jid], "remove"))).toEqual({ code: 401, text: "not-authorized" })
    expect(await iqError(sock.groupInviteCode(group.jid))).toEqual({ code: 401, text: "not-authorized" })
    const other = loopback.peer.groups.create(loopback.peer.member(BOB), "Private", [])
    expect(await iqError(sock.groupMetadata(other.jid))).toEqual({ code: 403, text: "forbidden" })
  })

  it("subject, description and settings: the change, and groups.update for it", async () => {
    const { sock, created } = await aliceWithGroup()
    const subject = onEvent(sock, "groups.update", u => u.some(g => g.subject === "Renamed"), "the subject notification")
    await sock.groupUpdateSubject(created.id, "Renamed")
    await subject
    const described = onEvent(sock, "groups.update", u => u.some(g => g.desc === "What we do"), "the description notification")
    await sock.groupUpdateDescription(created.id, "What we do")
    await described
    expect(await sock.groupMetadata(created.id)).toMatchObject({ subject: "Renamed", desc: "What we do" })
    // a second change names the current description (prev) — Baileys reads it first
    await sock.groupUpdateDescription(created.id, "")
    expect((await sock.groupMetadata(created.id)).desc).toBeUndefined()
    const announce = onEvent(sock, "groups.update", u => u.some(g => g.announce === true), "the announcement notification")
    await sock.groupSettingUpdate(created.id, "announcement")
    await announce
    const restrict = onEvent(sock, "groups.update", u => u.some(g => g.restrict === true), "the locked notification")
    await sock.groupSettingUpdate(created.id, "locked")
    await restrict
    expect(await sock.groupMetadata(created.id)).toMatchObject({ announce: true, restrict: true })
  })

  it("invite codes: get, revoke, and another account joins by code (410 gone for a revoked one)", async () => {
    const { sock, created } = await aliceWithGroup()
    const carol = await loopback.clients.pair(CAROL)
    const code = await sock.groupInviteCode(created.id)
    expect(code).toMatch(/^[A-Za-z0-9]{22}$/)
    const fresh = await sock.groupRevokeInvite(created.id)
    expect(fresh).not.toBe(code)
    expect(await iqError(carol.sock.groupAcceptInvite(code!))).toEqual({ code: 410, text: "gone" })
    expect(await iqError(carol.sock.groupAcceptInvite("NoSuchCode123"))).toEqual({ code: 404, text: "item-not-found" })
    const carolHears = onEvent(carol.sock, "group-participants.update", u => u.action === "add", "carol's join notification")
    const aliceHears = onEvent(sock, "group-participants.update", u => u.action === "add", "alice hears carol join")
    expect(await carol.sock.groupAcceptInvite(fresh!)).toBe(created.id)
    const carolAccount = loopback.peer.accounts.get(CAROL)!
    for (const heard of [await carolHears, await aliceHears]) {
      expect(heard).toMatchObject({ id: created.id, author: `${carolAccount.lidUser}@lid`, participants: [{ id: `${carolAccount.lidUser}@lid` }] })
    }
  })

  it("groupLeave: the group is gone from the list, the others hear a remove by the leaver", async () => {
    const { sock, created } = await aliceWithGroup()
    const carol = await loopback.clients.pair(CAROL)
    await sock.groupParticipantsUpdate(created.id, [`${CAROL}@s.whatsapp.net`], "add")
    const carolHears = onEvent(carol.sock, "group-participants.update", u => u.action === "remove", "carol hears alice leave")
    await sock.groupLeave(created.id)
    const alice = loopback.peer.accounts.get(ALICE)!
    expect(await carolHears).toMatchObject({ author: `${alice.lidUser}@lid`, participants: [{ id: `${alice.lidUser}@lid` }] })
    expect(await sock.groupFetchAllParticipating()).toEqual({})
    expect(Object.keys(await carol.sock.groupFetchAllParticipating())).toEqual([created.id])
  })

  it("a contact creates a group with the account: groups.upsert, then its changes arrive as events", async () => {
    const { sock } = await loopback.clients.pair(ALICE)
    const bob = loopback.peer.contact(BOB, { name: "Bob" })
    const joined = onEvent(sock, "groups.upsert", () => true, "the create notification")
    const group = loopback.peer.groups.create(loopback.peer.member(BOB), "Bob's plans", [loopback.peer.member(ALICE)])
    const [metadata] = await joined
    expect(metadata).toMatchObject({ id: group.jid, subject: "Bob's plans", ownerPn: `${BOB}@s.whatsapp.net` })
    const updated = onEvent(sock, "groups.update", u => u.some(g => g.subject === "New plans"), "the subject change")
    loopback.peer.groups.setSubject(group, loopback.peer.member(BOB), "New plans")
    expect((await updated)[0]).toMatchObject({ id: group.jid, author: bob.lid })
    const removed = onEvent(sock, "group-participants.update", u => u.action === "remove", "alice removed")
    loopback.peer.groups.updateParticipants(group, loopback.peer.member(BOB), "remove", [{ jid: `${ALICE}@s.whatsapp.net`, entity: loopback.peer.member(ALICE) }])
    expect((await removed).participants[0]).toMatchObject({ phoneNumber: `${ALICE}@s.whatsapp.net` })
  })
})

describe("wa-peer groups: messages with sender keys", () => {
  const sendAndDecrypt = async (sock: WASocket, group: string, text: string, readers: ReadonlyArray<string>) => {
    const received = Promise.all(readers.map(phone =>
      loopback.peer.waitFor<ReceivedMessage>("received", m => m.group === group && m.to === phone && m.text === text)))
    const sent = await sock.sendMessage(group, { text })
    const got = await received
    for (const message of got) expect(message).toMatchObject({ id: sent?.key.id, from: ALICE, toJid: group })
    return got
  }

  it("client → group: the members' phones take the sender key and decrypt the skmsg; later messages reuse it", async () => {
    const { sock, bob, created } = await aliceWithGroup()
    const carol = loopback.peer.contact(CAROL)
    await sock.groupParticipantsUpdate(created.id, [carol.jid], "add")
    const [first] = await sendAndDecrypt(sock, created.id, "hello team", [BOB, CAROL])
    // the distribution travelled in a 1:1 message, the text in the skmsg only
    expect(first?.message.senderKeyDistributionMessage).toBeFalsy()
    const alice = loopback.peer.accounts.get(ALICE)!
    expect(bob.party.senderKeys.has(created.id, lidSender(alice.lidUser, alice.device))).toBe(true)
    const distributedTo = () => loopback.peer.distributions.filter(d => d.group === created.id).map(d => d.to).sort()
    expect(distributedTo()).toEqual([BOB, CAROL])
    await sendAndDecrypt(sock, created.id, "second", [BOB, CAROL])
    expect(distributedTo()).toEqual([BOB, CAROL])
    // a member added later gets the key with the next message, the others do not again
    const dave = loopback.peer.contact(DAVE)
    await sock.groupParticipantsUpdate(created.id, [dave.jid], "add")
    await sendAndDecrypt(sock, created.id, "welcome dave", [BOB, CAROL, DAVE])
    expect(distributedTo()).toEqual([BOB, CAROL, DAVE])
    expect(loopback.peer.errors).toEqual([])
  })

  it("contact → group: Baileys takes the distribution, decrypts the skmsg, and the next one without it", async () => {
    const { sock, bob, created } = await aliceWithGroup()
    const upsert = (text: string) =>
      onEvent(sock, "messages.upsert", u => u.messages.some(m => m.message?.conversation === text), `the group message '${text}'`)
    const first = upsert("hi team")
    const id = await bob.sendToGroup(created.id, "hi team")
    const message = (await first).messages.find(m => m.message?.conversation === "hi team")!
    expect(message.key).toMatchObject({ id, remoteJid: created.id, fromMe: false, participant: bob.lid, participantAlt: bob.jid })
    expect(message.pushName).toBe("Bob")
    const second = upsert("still here")
    await bob.sendToGroup(created.id, "still here")
    expect((await second).messages[0]?.messageStubType ?? 0).toBe(0)
    // the client receipts each one to the group
    await expect.poll(() => loopback.peer.receipts.some(r => r.id === id)).toBe(true)
    expect(loopback.peer.errors).toEqual([])
  })

  it("a group message sent while the account was away arrives after its next login", async () => {
    const { sock, bob, created } = await aliceWithGroup()
    const auth = await loopback.clients.pair(CAROL)
    await sock.groupParticipantsUpdate(created.id, [`${CAROL}@s.whatsapp.net`], "add")
    auth.sock.end(undefined)
    await bob.sendToGroup(created.id, "while you were out")
    const again = loopback.clients.connect(auth.auth)
    const upsert = await onEvent(again, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "while you were out"), "the queued group message")
    expect(upsert.messages[0]?.key.remoteJid).toBe(created.id)
  })
})
