/**
 * The Baileys engine's account operations for people and groups against the loopback peer with
 * the REAL Baileys client: the own profile (about, picture), contacts' about, business flag,
 * push names and pictures, blocking, LID lookups, group settings, pictures and join requests,
 * and the events WhatsApp's notifications become. What the peer cannot carry (the push name
 * setting is an app-state patch) is in baileys-account-adapter.test.ts, at the socket boundary.
 */
import { describe, expect, it } from "vitest"
import sharp from "sharp"
import type { InboundContactChange } from "../src/runtime/EngineAccount.js"
import { useLinkedBaileysEngine } from "./support/baileysEngineLink.js"
import { cancelJoinRequest, requestJoin } from "./support/wa-peer/index.js"

const ALICE = "15551230001"
const BOB = "15551230002"
const CAROL = "15551230003"
const DAVE = "15551230004"
const ERIN = "15551230005"

const square = (red: number) =>
  sharp({ create: { width: 640, height: 640, channels: 3, background: { r: red, g: 40, b: 90 } } }).jpeg().toBuffer()

const engine = useLinkedBaileysEngine(ALICE, { businessName: "Alice" })
const lidOf = (phone: string) => `${engine.peer().contact(phone).lidUser}@lid`
const contactChange = (predicate: (change: InboundContactChange) => boolean) =>
  engine.event("ContactsChanged", (e) => e.changes.some(predicate)).then((e) => e.changes.find(predicate)!)

describe("the account's own profile", () => {
  it("reads the push name from the credentials and no about or picture at first", async () => {
    expect(await engine.run(engine.connection().profile.get)).toEqual({ name: "Alice", about: null, pictureUrl: null })
  })

  it("sets the about text, which the network then shows", async () => {
    await engine.run(engine.connection().profile.setAbout("Out fishing"))
    const alice = engine.peer().member(ALICE)
    expect(engine.peer().profiles.abouts.get(alice.kind === "account" ? alice.account.lidUser : "")?.text).toBe("Out fishing")
    expect((await engine.run(engine.connection().profile.get)).about).toBe("Out fishing")
  })

  it("sets a 640×640 JPEG as the picture (Baileys re-encodes it, same size), then removes it", async () => {
    await engine.run(engine.connection().profile.setPicture(await square(200)))
    const { pictureUrl } = await engine.run(engine.connection().profile.get)
    expect(pictureUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\//)
    const bytes = await engine.run(engine.connection().contacts.downloadPicture(pictureUrl!))
    expect(await sharp(bytes).metadata()).toMatchObject({ format: "jpeg", width: 640, height: 640 })

    await engine.run(engine.connection().profile.setPicture(null))
    expect((await engine.run(engine.connection().profile.get)).pictureUrl).toBeNull()
    expect(engine.peer().profiles.queries.filter((q) => q.from === ALICE).map((q) => q.op)).toEqual(
      expect.arrayContaining(["status", "picture set", "picture remove"])
    )
  })
})

describe("contacts: about, business, push names, pictures, LIDs", () => {
  it("resolves both ids: the phone's LID asked from the network, then the LID's phone from what was learnt", async () => {
    const peer = engine.peer()
    peer.contact(BOB, { name: "Bob" })
    expect(await engine.run(engine.connection().contacts.resolveIds(`${BOB}@c.us`))).toEqual({ lid: lidOf(BOB), phone: `${BOB}@c.us` })
    expect(await engine.run(engine.connection().contacts.resolveIds(lidOf(BOB)))).toEqual({ lid: lidOf(BOB), phone: `${BOB}@c.us` })
    // a LID nobody told the session about: no phone
    expect(await engine.run(engine.connection().contacts.resolveIds("999999999999999@lid"))).toEqual({ lid: "999999999999999@lid", phone: null })
    // a number not on WhatsApp has no LID
    expect(await engine.run(engine.connection().contacts.resolveIds("15559999999@c.us"))).toEqual({ lid: null, phone: "15559999999@c.us" })
  })

  it("a contact's about and business flag come from the network, the push name from their messages", async () => {
    const peer = engine.peer()
    const bob = peer.contact(BOB, { name: "Bob" })
    peer.profiles.setAbout(peer.member(BOB), "Available")
    peer.profiles.setBusiness(peer.member(BOB))
    expect(await engine.run(engine.connection().contacts.profile(`${BOB}@c.us`))).toEqual({ pushName: null, about: "Available", isBusiness: true })

    const id = await bob.send(ALICE, "hi")
    await engine.event("MessageReceived", (e) => e.message.engineMessageId === id)
    expect(await contactChange((c) => c.chatId === `${BOB}@c.us` && c.pushName === "Bob")).toEqual({ chatId: `${BOB}@c.us`, pushName: "Bob" })
    expect(await engine.run(engine.connection().contacts.profile(`${BOB}@c.us`))).toEqual({ pushName: "Bob", about: "Available", isBusiness: true })
    // the same name again is no news
    const again = await bob.send(ALICE, "still me")
    await engine.event("MessageReceived", (e) => e.message.engineMessageId === again)
    const names = engine.events().filter((e) => e._tag === "ContactsChanged" && e.changes.some((c) => c.pushName === "Bob"))
    expect(names).toHaveLength(1)

    const carol = peer.contact(CAROL, { name: "Carol" })
    expect(await engine.run(engine.connection().contacts.profile(carol.lid))).toEqual({ pushName: null, about: null, isBusiness: false })
    expect(await engine.refusal(engine.connection().contacts.profile("15559999999@c.us")))
      .toEqual({ code: "CONTACT_NOT_FOUND", refusal: "not_found", transient: false })
  })

  it("a contact's picture: none, then changed (announced, fetched byte for byte through the session's agent), then removed", async () => {
    const peer = engine.peer()
    peer.contact(BOB, { name: "Bob" })
    expect(await engine.run(engine.connection().contacts.pictureUrl(`${BOB}@c.us`))).toBeNull()

    const jpeg = await square(10)
    peer.profiles.setPicture(peer.member(BOB), jpeg)
    // the notification names Bob by LID; the engine reports him by phone
    expect(await contactChange((c) => c.picture === "changed")).toEqual({ chatId: `${BOB}@c.us`, picture: "changed" })
    const url = await engine.run(engine.connection().contacts.pictureUrl(`${BOB}@c.us`))
    expect(url).not.toBeNull()
    expect(Buffer.from(await engine.run(engine.connection().contacts.downloadPicture(url!)))).toEqual(jpeg)

    peer.profiles.setPicture(peer.member(BOB), null)
    expect(await contactChange((c) => c.picture === "removed")).toEqual({ chatId: `${BOB}@c.us`, picture: "removed" })
    expect(await engine.run(engine.connection().contacts.pictureUrl(`${BOB}@c.us`))).toBeNull()
    // the media server no longer has it
    peer.media.expire(url!)
    expect(await engine.refusal(engine.connection().contacts.downloadPicture(url!)))
      .toEqual({ code: "PICTURE_GONE", refusal: "not_found", transient: false })
  })
})

describe("blocking", () => {
  it("blocks and unblocks by phone id; the blocklist names people by phone", async () => {
    const peer = engine.peer()
    const dave = peer.contact(DAVE, { name: "Dave" })
    await engine.run(engine.connection().contacts.setBlocked(`${DAVE}@c.us`, true))
    expect([...peer.profiles.blocked(ALICE)]).toEqual([dave.lidUser])
    expect(await engine.run(engine.connection().contacts.blocklist)).toEqual([`${DAVE}@c.us`])
    await engine.run(engine.connection().contacts.setBlocked(`${DAVE}@c.us`, false))
    expect(await engine.run(engine.connection().contacts.blocklist)).toEqual([])
  })

  it("the phone blocking someone is announced as a contact change", async () => {
    const peer = engine.peer()
    peer.contact(ERIN, { name: "Erin" })
    await engine.run(engine.connection().contacts.resolveIds(`${ERIN}@c.us`)) // the session learns Erin's LID
    peer.profiles.blockFromPhone(ALICE, peer.member(ERIN), true)
    expect(await contactChange((c) => c.chatId === `${ERIN}@c.us` && c.blocked === true)).toEqual({ chatId: `${ERIN}@c.us`, blocked: true })
    peer.profiles.blockFromPhone(ALICE, peer.member(ERIN), false)
    await contactChange((c) => c.chatId === `${ERIN}@c.us` && c.blocked === false)
  })

  it("blocking a number not on WhatsApp is not found", async () => {
    expect(await engine.refusal(engine.connection().contacts.setBlocked("15559999999@c.us", true)))
      .toEqual({ code: "CONTACT_NOT_FOUND", refusal: "not_found", transient: false })
  })
})

describe("group settings, pictures and join requests", () => {
  it("sets all four settings, reported as updates and read back", async () => {
    engine.peer().contact(BOB, { name: "Bob" })
    const team = await engine.run(engine.connection().groups.create("Settings", [`${BOB}@c.us`]))
    expect(team).toMatchObject({ announce: false, restrict: false, memberAddMode: "admins", approval: false })
    await engine.run(engine.connection().groups.setSettings(team.id, { announce: true, restrict: true, memberAddMode: "all", approval: true }))
    const update = (key: string) =>
      engine.event("GroupChanged", (e) => e.change.kind === "update" && e.change.groupId === team.id && e.change.update !== undefined && key in e.change.update)
        .then((e) => e.change)
    expect(await update("memberAddMode")).toMatchObject({ update: { memberAddMode: "all" }, by: `${ALICE}@c.us` })
    expect(await update("approval")).toMatchObject({ update: { approval: true }, by: `${ALICE}@c.us` })
    await update("announce")
    await update("restrict")
    expect(await engine.run(engine.connection().groups.get(team.id))).toMatchObject({ announce: true, restrict: true, memberAddMode: "all", approval: true })
    await engine.run(engine.connection().groups.setSettings(team.id, { memberAddMode: "admins" }))
    expect(await engine.run(engine.connection().groups.get(team.id))).toMatchObject({ memberAddMode: "admins", approval: true })
  })

  it("sets and removes the group's picture", async () => {
    const team = await engine.run(engine.connection().groups.create("Pictures", [`${BOB}@c.us`]))
    await engine.run(engine.connection().groups.setPicture(team.id, await square(120)))
    const url = await engine.run(engine.connection().contacts.pictureUrl(team.id))
    expect(await sharp(await engine.run(engine.connection().contacts.downloadPicture(url!))).metadata()).toMatchObject({ width: 640, height: 640 })
    await engine.run(engine.connection().groups.setPicture(team.id, null))
    expect(await engine.run(engine.connection().contacts.pictureUrl(team.id))).toBeNull()
  })

  it("join requests: announced, listed, approved (a member now) and rejected; a request taken back is revoked", async () => {
    const peer = engine.peer()
    const team = await engine.run(engine.connection().groups.create("Requests", [`${BOB}@c.us`]))
    await engine.run(engine.connection().groups.setSettings(team.id, { approval: true }))
    const group = peer.group(team.id)!
    for (const phone of [CAROL, DAVE, ERIN]) {
      peer.contact(phone)
      requestJoin(peer.groups, group, peer.member(phone))
    }
    const request = (action: string, phone: string) =>
      engine.event("JoinRequestsChanged", (e) => e.request.groupId === team.id && e.request.action === action && e.request.participants[0] === `${phone}@c.us`)
        .then((e) => e.request)
    expect(await request("created", CAROL)).toEqual({ groupId: team.id, participants: [`${CAROL}@c.us`], action: "created", by: `${CAROL}@c.us` })

    const pending = await engine.run(engine.connection().groups.joinRequests(team.id))
    expect(pending.map((r) => r.id).sort()).toEqual([`${CAROL}@c.us`, `${DAVE}@c.us`, `${ERIN}@c.us`])
    expect(pending[0]).toMatchObject({ requestedAt: expect.stringMatching(/^\d{4}-/), method: "invite_link" })

    expect(await engine.run(engine.connection().groups.answerJoinRequests(team.id, [`${CAROL}@c.us`, "15559999999@c.us"], "approve"))).toEqual([
      { id: `${CAROL}@c.us`, status: 200, ok: true },
      { id: "15559999999@c.us", status: 404, ok: false }
    ])
    await engine.event("GroupChanged", (e) => e.change.kind === "participants" && e.change.groupId === team.id && e.change.participants?.[0] === `${CAROL}@c.us`)
    expect((await engine.run(engine.connection().groups.get(team.id))).participants).toContainEqual({ id: `${CAROL}@c.us`, role: "member" })

    await engine.run(engine.connection().groups.answerJoinRequests(team.id, [`${DAVE}@c.us`], "reject"))
    expect(await request("rejected", DAVE)).toMatchObject({ by: `${ALICE}@c.us` })
    cancelJoinRequest(peer.groups, group, peer.member(ERIN))
    expect(await request("revoked", ERIN)).toMatchObject({ by: `${ERIN}@c.us` })
    expect(await engine.run(engine.connection().groups.joinRequests(team.id))).toEqual([])
  })

  it("in someone else's group a member may not change settings, the picture of a locked group, or see requests", async () => {
    const peer = engine.peer()
    const theirs = peer.groups.create(peer.member(BOB), "Bob's", [peer.member(ALICE)])
    peer.groups.setSettings(theirs, peer.member(BOB), { restrict: true })
    await engine.event("GroupChanged", (e) => e.change.kind === "join" && e.change.groupId === theirs.jid)
    const forbidden = { code: "NOT_GROUP_ADMIN", refusal: "forbidden", transient: false }
    expect(await engine.refusal(engine.connection().groups.setSettings(theirs.jid, { approval: true }))).toEqual(forbidden)
    expect(await engine.refusal(engine.connection().groups.setPicture(theirs.jid, await square(1)))).toEqual(forbidden)
    expect(await engine.refusal(engine.connection().groups.joinRequests(theirs.jid))).toEqual(forbidden)
    expect(await engine.refusal(engine.connection().groups.answerJoinRequests(theirs.jid, [`${CAROL}@c.us`], "approve"))).toEqual(forbidden)
    expect(await engine.refusal(engine.connection().groups.setSettings("120363000000000000@g.us", { announce: true })))
      .toMatchObject({ code: "GROUP_NOT_FOUND", refusal: "not_found" })
    expect(peer.errors).toEqual([])
  })
})
