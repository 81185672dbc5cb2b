import sharp from "sharp"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, TEST_KEY, useGateway } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.js"

/**
 * The account's own profile and what it knows of and does to others, over real HTTP between
 * sandbox sessions: names, about texts and pictures others see, blocking both ways, LID lookups.
 */
describe("profiles, contacts and blocking between sandbox sessions", () => {
  const gateway = useGateway({
    webhooks: { timeout: Duration.seconds(2), allowPrivate: true, concurrency: 8, perWebhookConcurrency: 2, perWebhookConcurrencyMax: 2, eventRetention: Duration.hours(1) }
  })
  let alice: { id: string; phone: string }
  let bob: { id: string; phone: string }
  let receiver: WebhookReceiver
  const aliceChat = () => `${alice.phone}@c.us`
  const bobChat = () => `${bob.phone}@c.us`
  const call = (method: string, sessionId: string, route: string, body?: unknown) =>
    gateway().call(method, `/api/sessions/${sessionId}${route}`, body === undefined ? {} : { body })

  /** A 1200×600 PNG: green in the middle 600×600, red and blue strips either side. */
  const widePng = () =>
    sharp({ create: { width: 1200, height: 600, channels: 3, background: "#00ff00" } })
      .composite([
        { input: { create: { width: 300, height: 600, channels: 3, background: "#ff0000" } }, left: 0, top: 0 },
        { input: { create: { width: 300, height: 600, channels: 3, background: "#0000ff" } }, left: 900, top: 0 }
      ])
      .png()
      .toBuffer()

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    alice = await readySession(gateway(), "people-alice")
    bob = await readySession(gateway(), "people-bob")
    const hook = await gateway().call("POST", "/api/webhooks", { body: { url: receiver.url, events: ["contact.update"] } })
    receiver.setSecret(hook.body.secret)
    // Bob and Alice know each other: they wrote.
    expect((await call("POST", alice.id, "/messages/send-text", { chatId: bob.phone, text: "hi bob" })).status).toBe(201)
    await eventually(() => call("GET", bob.id, `/messages?direction=in&chatId=${aliceChat()}`), (r) => r.body.data.length > 0)
  })
  afterAll(() => receiver.close())

  const contactUpdate = (sessionId: string, match: (data: any) => boolean) =>
    eventually(async () => receiver.deliveries.filter((d) => d.event === "contact.update" && d.sessionId === sessionId && match(d.data)), (found) => found.length > 0)

  it("reads and changes the session's own name and about; the session's push name follows", async () => {
    const before = await call("GET", alice.id, "/profile")
    expect(before.status).toBe(200)
    expect(before.body).toEqual({ name: expect.stringMatching(/^Sandbox \d{4}$/), about: null, picture: null })

    const named = await call("PUT", alice.id, "/profile/name", { name: "  Alice A.  " })
    expect(named.status).toBe(200)
    expect(named.body.name).toBe("Alice A.")
    expect((await gateway().call("GET", `/api/sessions/${alice.id}`)).body.pushName).toBe("Alice A.")

    const about = await call("PUT", alice.id, "/profile/about", { about: "Out fishing" })
    expect(about.body).toMatchObject({ name: "Alice A.", about: "Out fishing" })

    expect((await call("PUT", alice.id, "/profile/name", { name: "" })).status).toBe(400)
    expect((await call("PUT", alice.id, "/profile/name", { name: "x".repeat(26) })).status).toBe(400)
    expect((await call("PUT", alice.id, "/profile/about", { about: "x".repeat(140) })).status).toBe(400)
    expect((await call("GET", "no-such-session", "/profile")).status).toBe(404)
  })

  it("shows Alice's new name and about in Bob's contact view, and tells Bob with contact.update", async () => {
    await call("PUT", alice.id, "/profile/name", { name: "Alice Renamed" })
    await contactUpdate(bob.id, (data) => data.chatId === aliceChat() && data.changes.pushName === "Alice Renamed")
    const seen = await call("GET", bob.id, `/contacts/${alice.phone}`)
    expect(seen.status).toBe(200)
    expect(seen.body).toMatchObject({ chatId: aliceChat(), phone: aliceChat(), pushName: "Alice Renamed", about: "Out fishing", isBusiness: false, blocked: false })
    expect(seen.body.lid).toMatch(/^\d+@lid$/)
    expect((await call("GET", bob.id, "/contacts/999000000001")).status).toBe(404)
    expect((await call("GET", bob.id, "/contacts/not-a-number")).status).toBe(400)
  })

  it("makes any image WhatsApp's 640×640 JPEG, cropped to its centre; Bob sees and downloads it", async () => {
    const png = await widePng()
    const set = await call("PUT", alice.id, "/profile/picture", { media: { data: png.toString("base64") } })
    expect(set.status).toBe(200)
    expect(set.body.picture).toEqual(expect.any(String))
    await contactUpdate(bob.id, (data) => data.chatId === aliceChat() && data.changes.picture === "changed")

    const url = await call("GET", bob.id, `/contacts/${alice.phone}/picture`)
    expect(url.status).toBe(200)
    expect(url.body.url).toBe(set.body.picture)
    const image = await call("GET", bob.id, `/contacts/${alice.phone}/picture?format=image`)
    expect(image.status).toBe(200)
    expect(image.headers.get("content-type")).toBe("image/jpeg")
    const meta = await sharp(Buffer.from(image.body)).metadata()
    expect(meta).toMatchObject({ format: "jpeg", width: 640, height: 640 })
    // The centre square is all green: the red and blue strips were cropped off.
    const { data } = await sharp(Buffer.from(image.body)).resize(4, 1, { fit: "fill" }).raw().toBuffer({ resolveWithObject: true })
    for (let pixel = 0; pixel < 4; pixel++) {
      expect(data[pixel * 3 + 1]).toBeGreaterThan(200)
      expect(data[pixel * 3]).toBeLessThan(60)
      expect(data[pixel * 3 + 2]).toBeLessThan(60)
    }
  })

  it("takes a picture as multipart too, refuses what is not an image, and removes it", async () => {
    const form = new FormData()
    form.append("file", new Blob([await widePng()], { type: "image/png" }), "me.png")
    const uploaded = await fetch(`${gateway().baseUrl}/api/sessions/${bob.id}/profile/picture`, {
      method: "PUT",
      headers: { "x-api-key": TEST_KEY },
      body: form
    })
    const answer = (await uploaded.json()) as { picture: unknown }
    expect(uploaded.status, JSON.stringify(answer)).toBe(200)
    expect(answer.picture).toEqual(expect.any(String))

    const notImage = await call("PUT", alice.id, "/profile/picture", { media: { data: Buffer.from("just some text").toString("base64") } })
    expect(notImage.status).toBe(400)
    expect(notImage.body.code).toBe("INVALID_PICTURE")
    const truncated = (await widePng()).subarray(0, 200)
    expect((await call("PUT", alice.id, "/profile/picture", { media: { data: truncated.toString("base64") } })).body.code).toBe("INVALID_PICTURE")

    const removed = await call("DELETE", alice.id, "/profile/picture")
    expect(removed.status).toBe(200)
    expect(removed.body.picture).toBeNull()
    await contactUpdate(bob.id, (data) => data.chatId === aliceChat() && data.changes.picture === "removed")
    expect((await call("GET", bob.id, `/contacts/${alice.phone}/picture`)).body).toEqual({ url: null })
    const none = await call("GET", bob.id, `/contacts/${alice.phone}/picture?format=image`)
    expect(none.status).toBe(404)
    expect(none.body.code).toBe("PICTURE_NOT_FOUND")
  })

  it("a blocked Alice cannot reach Bob, Bob cannot write to her (409 CONTACT_BLOCKED); unblocking restores both", async () => {
    const blocked = await call("POST", bob.id, `/contacts/${alice.phone}/block`)
    expect(blocked.status).toBe(200)
    expect(blocked.body).toMatchObject({ chatId: aliceChat(), blocked: true })
    const list = await call("GET", bob.id, "/contacts/blocklist?limit=10")
    expect(list.body.data).toMatchObject({ items: [{ chatId: aliceChat(), blocked: true }], pagination: { total: 1 } })

    const refused = await call("POST", bob.id, "/messages/send-text", { chatId: alice.phone, text: "you there?" })
    expect(refused.status).toBe(409)
    expect(refused.body.code).toBe("CONTACT_BLOCKED")

    const unheard = await call("POST", alice.id, "/messages/send-text", { chatId: bob.phone, text: "while blocked" })
    expect(unheard.status).toBe(201)
    // Alice's message leaves her (sent) but never reaches Bob.
    await eventually(() => call("GET", alice.id, `/messages/${unheard.body.messageId}`), (r) => r.body.status === "sent")
    await new Promise((resolve) => setTimeout(resolve, 300))
    const inbox = await call("GET", bob.id, `/messages?direction=in&chatId=${aliceChat()}`)
    expect(inbox.body.data.map((m: any) => m.text)).not.toContain("while blocked")

    const unblocked = await call("POST", bob.id, `/contacts/${alice.phone}/unblock`)
    expect(unblocked.body.blocked).toBe(false)
    expect((await call("GET", bob.id, "/contacts/blocklist")).body.data).toEqual([])
    expect((await call("POST", bob.id, "/messages/send-text", { chatId: alice.phone, text: "welcome back" })).status).toBe(201)
    await call("POST", alice.id, "/messages/send-text", { chatId: bob.phone, text: "after unblock" })
    await eventually(() => call("GET", bob.id, `/messages?direction=in&chatId=${aliceChat()}`), (r) => r.body.data.some((m: any) => m.text === "after unblock"))
    expect((await call("POST", bob.id, "/contacts/999000000001/block")).status).toBe(404)
  })

  it("refuses every kind of send to a blocked contact with 409 CONTACT_BLOCKED, a bulk batch whole, storing nothing", async () => {
    const earlier = await call("POST", bob.id, "/messages/send-text", { chatId: alice.phone, text: "to edit later" })
    await eventually(() => call("GET", bob.id, `/messages/${earlier.body.messageId}`), (r) => r.body.status !== "pending")
    const fromAlice = (await call("GET", bob.id, `/messages?direction=in&chatId=${aliceChat()}`)).body.data[0]
    expect((await call("POST", bob.id, `/contacts/${alice.phone}/block`)).status).toBe(200)
    const toAlice = () => call("GET", bob.id, `/messages?direction=out&chatId=${aliceChat()}`).then((r) => r.body.data.length)
    const outboxBefore = await toAlice()

    const bulk = await call("POST", bob.id, "/messages/send-bulk", {
      messages: [
        { type: "text", chatId: "4915100000077", text: "to someone else" },
        { type: "text", chatId: alice.phone, text: "bulk to the blocked" }
      ]
    })
    expect(bulk.status).toBe(409)
    expect(bulk.body).toMatchObject({ code: "CONTACT_BLOCKED", details: { index: 1 } })
    const refusals = {
      forward: await call("POST", bob.id, `/messages/${fromAlice.id}/forward`, { chatId: alice.phone }),
      location: await call("POST", bob.id, "/messages/send-location", { chatId: alice.phone, latitude: 52.5, longitude: 13.4 }),
      image: await call("POST", bob.id, "/messages/send-image", { chatId: alice.phone, media: { data: base64(png("blocked")) } }),
      reaction: await call("POST", bob.id, "/messages/react", { chatId: alice.phone, messageId: fromAlice.id, emoji: "👍" }),
      edit: await call("PUT", bob.id, `/messages/${earlier.body.messageId}`, { text: "edited while blocked" })
    }
    for (const [kind, refused] of Object.entries(refusals)) {
      expect({ kind, status: refused.status, code: refused.body.code }).toEqual({ kind, status: 409, code: "CONTACT_BLOCKED" })
    }
    // nothing was stored: not even the bulk item to the contact that is not blocked
    expect(await toAlice()).toBe(outboxBefore)
    expect((await call("GET", bob.id, "/messages?direction=out&chatId=4915100000077@c.us")).body.data).toEqual([])
    expect((await call("GET", bob.id, `/messages/${earlier.body.messageId}`)).body.text).toBe("to edit later")
    expect((await call("GET", bob.id, `/messages/${fromAlice.id}`)).body.reactions).toEqual([])
    await call("POST", bob.id, `/contacts/${alice.phone}/unblock`)
  })

  it("looks a LID up both ways, from what the session learnt or else from the network", async () => {
    const byPhone = await call("GET", alice.id, `/contacts/${bob.phone}/lid`)
    expect(byPhone.status).toBe(200)
    expect(byPhone.body).toEqual({ phone: bobChat(), lid: expect.stringMatching(/^\d+@lid$/), chatId: bobChat() })
    const lid = byPhone.body.lid as string
    const byLid = await call("GET", alice.id, `/contacts/lid/${lid.replace("@lid", "")}`)
    expect(byLid.body).toEqual({ phone: bobChat(), lid, chatId: bobChat() })
    // Kept: the contact list now knows both of Bob's ids.
    const contacts = await call("GET", alice.id, "/contacts")
    expect(contacts.body.data).toContainEqual(expect.objectContaining({ id: bobChat(), lid }))
    expect((await call("GET", alice.id, "/contacts/lid/12345678901234")).status).toBe(404)
    expect((await call("GET", alice.id, "/contacts/lid/abc")).status).toBe(400)
  })

  it("refuses the account's changes to a viewer key", async () => {
    const viewer = await gateway().call("POST", "/api/auth/api-keys", { body: { name: "people-viewer", role: "viewer" } })
    expect(viewer.status).toBe(201)
    const key = viewer.body.key as string
    expect((await gateway().call("GET", `/api/sessions/${alice.id}/profile`, { key })).status).toBe(200)
    expect((await gateway().call("PUT", `/api/sessions/${alice.id}/profile/name`, { key, body: { name: "Nope" } })).status).toBe(403)
    expect((await gateway().call("POST", `/api/sessions/${alice.id}/contacts/${bob.phone}/block`, { key })).status).toBe(403)
  })
})
