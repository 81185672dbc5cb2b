import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readdirSync } from "node:fs"
import { inspect } from "node:util"
import { baileysGatewayOn, type RestartableBaileysGateway } from "./support/baileysGateway.js"
import { eventually, tempDir, TEST_KEY, type TestGateway } from "./support/gateway.js"
import { base64, opus, pdf, png } from "./support/mediaSamples.js"
import { startConnectProxy } from "./support/proxies.js"
import { type MediaKind, type ReceivedMessage, startWaPeer, type WaPeer } from "./support/wa-peer/index.js"

/**
 * The gateway with ENGINE=baileys, end to end through its REST API, against the loopback
 * WhatsApp Web peer: the real Baileys client links, sends, receives, restarts and is
 * disconnected in each of the ways WhatsApp does it. The tests run in order on one session.
 */

const ALICE = "15551230001"
const BOB = "15551230002"
const CAROL = "15551230003"
const DAVE = "15551230004"

describe("ENGINE=baileys through the REST API, against a loopback WhatsApp Web peer", () => {
  let peer: WaPeer
  let dataDir: string
  let baileys: RestartableBaileysGateway
  let gateway: Omit<TestGateway, "network">
  let sessionId = ""

  const start = async () => {
    gateway = await baileys.start()
  }
  const stop = () => baileys.stop()
  const session = () => gateway.call("GET", `/api/sessions/${sessionId}`)
  const statusIs = (status: string) => eventually(session, (r) => r.body.status === status, 15_000)
  const message = (id: string) => gateway.call("GET", `/api/sessions/${sessionId}/messages/${id}`)
  const bobsInbox = () => gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=in&chatId=${BOB}@c.us`)
  /** The gateway's copy of what Bob sent, once stored. */
  const receivedFromBob = async (match: (m: any) => boolean) =>
    (await eventually(bobsInbox, (r) => r.body.data.some(match), 15_000)).body.data.find(match)
  /** The bytes and headers of a message's media, as the API serves them. */
  const mediaOf = async (id: string) => {
    const response = await fetch(`${gateway.baseUrl}/api/sessions/${sessionId}/messages/${id}/media`, { headers: { "x-api-key": TEST_KEY } })
    return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) }
  }
  const reactionsOn = (id: string, expected: ReadonlyArray<{ emoji: string; from: string }>) =>
    eventually(
      () => message(id),
      (r) => JSON.stringify(r.body.reactions.map(({ emoji, from }: { emoji: string; from: string }) => ({ emoji, from }))) === JSON.stringify(expected),
      15_000
    )

  /** Everything written to the console while the engine runs (what an operator's logs get). */
  const printed: Array<string> = []
  const restoreConsole: Array<() => void> = []

  beforeAll(async () => {
    for (const method of ["info", "warn", "log", "debug", "error"] as const) {
      const original = console[method]
      console[method] = (...args: Array<unknown>) => {
        printed.push(args.map((arg) => (typeof arg === "string" ? arg : inspect(arg, { depth: 5 }))).join(" "))
        original.apply(console, args)
      }
      restoreConsole.push(() => void (console[method] = original))
    }
    peer = await startWaPeer()
    dataDir = tempDir("switchboard-baileys-")
    baileys = baileysGatewayOn(peer, dataDir)
    await start()
  })
  afterAll(async () => {
    await stop()
    await peer?.close()
    for (const restore of restoreConsole) restore()
  })

  it("links by QR: the API shows the real QR, the phone scans it, the session is ready with its number", async () => {
    const created = await gateway.call("POST", "/api/sessions", { body: { name: "alice", autoStart: true } })
    expect(created.status).toBe(201)
    expect(created.body.engine).toBe("baileys")
    sessionId = created.body.id
    const qr = await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}/qr`), (r) => r.status === 200, 15_000)
    expect(qr.body.image).toMatch(/^data:image\/png;base64,/)
    await peer.scan(qr.body.qr, { phone: ALICE })
    const ready = await statusIs("ready")
    expect(ready.body.phone).toBe(ALICE)
    const me = await gateway.call("GET", `/api/sessions/${sessionId}/me`)
    expect(me.body).toMatchObject({ id: `${ALICE}@c.us`, phone: ALICE, lid: expect.stringMatching(/@lid$/) })
  })

  it("sends a text that the contact decrypts, and shows it delivered", async () => {
    peer.contact(BOB, { name: "Bob" })
    const decrypted = peer.waitFor<{ text?: string }>("received", (m) => m.text === "hello bob", 15_000)
    const sent = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: `+${BOB}`, text: "hello bob" } })
    expect(sent.status).toBe(201)
    expect(await decrypted).toMatchObject({ text: "hello bob" })
    const delivered = await eventually(() => message(sent.body.messageId), (r) => r.body.status === "delivered", 15_000)
    expect(delivered.body).toMatchObject({ chatId: `${BOB}@c.us`, to: `${BOB}@c.us`, fromMe: true })
    expect(delivered.body.statusHistory.map((h: { status: string }) => h.status)).toEqual(["pending", "sent", "delivered"])
  })

  it("stores what the contact sends, under the contact's phone chat id though it came from a LID", async () => {
    const bob = peer.contact(BOB)
    await bob.send(ALICE, "hi alice")
    const inbox = await eventually(
      () => gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=in`),
      (r) => r.body.data.some((m: { text: string }) => m.text === "hi alice"),
      15_000
    )
    const received = inbox.body.data.find((m: { text: string }) => m.text === "hi alice")
    expect(received).toMatchObject({ chatId: `${BOB}@c.us`, from: `${BOB}@c.us`, fromMe: false, type: "text" })
  })

  it("logs in again without a QR after the gateway restarts, and still sends and receives", async () => {
    await stop()
    await start()
    await statusIs("ready")
    expect((await gateway.call("GET", `/api/sessions/${sessionId}/qr`)).status).toBe(409)
    const decrypted = peer.waitFor<{ text?: string }>("received", (m) => m.text === "after restart", 15_000)
    await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: `${BOB}@c.us`, text: "after restart" } })
    await decrypted
    await peer.contact(BOB).send(ALICE, "welcome back")
    await eventually(
      () => gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=in`),
      (r) => r.body.data.some((m: { text: string }) => m.text === "welcome back"),
      15_000
    )
  })

  it("a dropped socket: disconnected, then ready again after the backoff", async () => {
    peer.drop(ALICE)
    const down = await eventually(session, (r) => r.body.status === "disconnected", 10_000)
    // A cut socket is Baileys' 428 "connection closed": a retry, not a logout or a failure.
    expect(down.body.lastError.code).toBe("CONNECTION_CLOSED")
    await statusIs("ready")
  })

  it("a 440 conflict: failed with CONNECTION_REPLACED, and no reconnect loop", async () => {
    peer.conflict(ALICE)
    const failed = await statusIs("failed")
    expect(failed.body.lastError.code).toBe("CONNECTION_REPLACED")
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect((await session()).body.status).toBe("failed")
    expect(peer.isOnline(ALICE)).toBe(false)
    // Started again by the operator, it links with its credentials.
    await gateway.call("POST", `/api/sessions/${sessionId}/start`)
    await statusIs("ready")
  })

  it("links by pairing code: the API gives the code, the phone enters it", async () => {
    const created = await gateway.call("POST", "/api/sessions", { body: { name: "carol", autoStart: true } })
    await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}/qr`), (r) => r.status === 200, 15_000)
    const code = await gateway.call("POST", `/api/sessions/${created.body.id}/pairing-code`, { body: { phoneNumber: `+${CAROL}` } })
    expect(code.status).toBe(200)
    expect(code.body.code).toMatch(/^[A-Z0-9]{4}-?[A-Z0-9]{4}$/)
    await peer.enterCode(code.body.code, { phone: CAROL })
    const ready = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}`), (r) => r.body.status === "ready", 15_000)
    expect(ready.body.phone).toBe(CAROL)
  })

  it("connects through the session's proxy: an HTTP CONNECT proxy with credentials carries the WhatsApp socket", async () => {
    const proxy = await startConnectProxy({ user: "ops", password: "s3cret" })
    try {
      const created = await gateway.call("POST", "/api/sessions", {
        body: { name: "dave", autoStart: true, proxy: { url: `http://ops:s3cret@127.0.0.1:${proxy.port}` } }
      })
      expect(created.body.proxy).toEqual({ url: `http://ops:***@127.0.0.1:${proxy.port}` })
      const qr = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}/qr`), (r) => r.status === 200, 15_000)
      await peer.scan(qr.body.qr, { phone: DAVE })
      await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}`), (r) => r.body.status === "ready", 15_000)
      expect(proxy.tunnels).toContain(`127.0.0.1:${new URL(peer.url).port}`)
      const decrypted = peer.waitFor<{ text?: string }>("received", (m) => m.text === "via the proxy", 15_000)
      await gateway.call("POST", `/api/sessions/${created.body.id}/messages/send-text`, { body: { chatId: `+${BOB}`, text: "via the proxy" } })
      await decrypted
    } finally {
      await proxy.close()
    }
  })

  it("bulk send: the contact decrypts every message of the batch, and the batch completes", async () => {
    const texts = ["one", "two", "three"].map((text) => `bulk ${text}`)
    const decrypted = Promise.all(texts.map((text) => peer.waitFor<{ text?: string }>("received", (m) => m.text === text, 15_000)))
    const accepted = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-bulk`, {
      body: { messages: texts.map((text) => ({ type: "text", chatId: `${BOB}@c.us`, text })) }
    })
    expect(accepted.status).toBe(202)
    await decrypted
    const batch = await eventually(
      () => gateway.call("GET", `/api/sessions/${sessionId}/messages/batch/${accepted.body.batchId}`),
      (r) => r.body.status === "completed" && r.body.sent === 3,
      15_000
    )
    expect(batch.body).toMatchObject({ total: 3, failed: 0, pending: 0 })
  })

  /** Sends media through the API; resolves with the gateway's id and what Bob's phone decrypted. */
  const sendMediaToBob = async (kind: MediaKind, send: () => Promise<{ status: number; body: any }>) => {
    const arrived = peer.waitFor<ReceivedMessage>("received", (m) => m.to === BOB && m.media === kind, 15_000)
    const sent = await send()
    expect(sent.status).toBe(201)
    const received = await arrived
    return { messageId: sent.body.messageId as string, media: await peer.downloadMedia(received) }
  }

  it("sends an image (base64), a document (multipart) and a voice note: the contact decrypts the same bytes, all delivered", async () => {
    peer.contact(BOB)
    const image = png("alice to bob")
    const sentImage = await sendMediaToBob("image", () =>
      gateway.call("POST", `/api/sessions/${sessionId}/messages/send-image`, {
        body: { chatId: `+${BOB}`, media: { data: base64(image) }, caption: "one pixel" }
      }))
    expect(sentImage.media).toMatchObject({ kind: "image", mimetype: "image/png", caption: "one pixel", ptt: false })
    expect(sentImage.media.bytes.equals(Buffer.from(image))).toBe(true)

    const document = pdf("alice to bob")
    const sentDocument = await sendMediaToBob("document", async () => {
      const form = new FormData()
      form.append("chatId", BOB)
      form.append("file", new Blob([document], { type: "application/pdf" }), "Q3 report.pdf")
      const response = await fetch(`${gateway.baseUrl}/api/sessions/${sessionId}/messages/send-document`, {
        method: "POST",
        headers: { "x-api-key": TEST_KEY },
        body: form
      })
      return { status: response.status, body: await response.json() }
    })
    expect(sentDocument.media).toMatchObject({ kind: "document", mimetype: "application/pdf", fileName: "Q3 report.pdf" })
    expect(sentDocument.media.bytes.equals(Buffer.from(document))).toBe(true)

    const voice = opus("alice to bob")
    const sentVoice = await sendMediaToBob("audio", () =>
      gateway.call("POST", `/api/sessions/${sessionId}/messages/send-audio`, { body: { chatId: BOB, media: { data: base64(voice) }, ptt: true } }))
    expect(sentVoice.media).toMatchObject({ kind: "audio", mimetype: expect.stringMatching(/^audio\/ogg/), ptt: true })
    expect(sentVoice.media.bytes.equals(Buffer.from(voice))).toBe(true)

    // Uploaded over HTTPS to the peer's media server, trusted through mediaCa.
    expect(peer.media.requests.filter((r) => r.method === "POST" && r.status === 200).map((r) => r.path.split("/")[2])).toEqual(
      expect.arrayContaining(["image", "document", "audio"])
    )
    for (const { messageId } of [sentImage, sentDocument, sentVoice]) {
      await eventually(() => message(messageId), (r) => r.body.status === "delivered", 15_000)
    }
    expect((await message(sentImage.messageId)).body).toMatchObject({ type: "image", caption: "one pixel", media: { mimetype: "image/png" } })
  })

  it("stores the image, document and voice note the contact sends, and serves their exact bytes", async () => {
    const bob = peer.contact(BOB)
    const image = png("bob to alice")
    const document = pdf("bob to alice")
    const voice = opus("bob to alice")
    await bob.sendMedia(ALICE, { kind: "image", bytes: image, mimetype: "image/png", caption: "for alice" })
    await bob.sendMedia(ALICE, { kind: "document", bytes: document, mimetype: "application/pdf", fileName: "notes.pdf" })
    await bob.sendMedia(ALICE, { kind: "audio", bytes: voice, mimetype: "audio/ogg; codecs=opus", ptt: true, seconds: 1 })

    const storedImage = await receivedFromBob((m) => m.type === "image" && m.caption === "for alice")
    expect(storedImage).toMatchObject({
      chatId: `${BOB}@c.us`,
      from: `${BOB}@c.us`,
      fromMe: false,
      text: null,
      error: null,
      media: { mimetype: "image/png", filename: null, size: image.length, ptt: false }
    })
    const servedImage = await mediaOf(storedImage.id)
    expect(servedImage.status).toBe(200)
    expect(servedImage.headers.get("content-type")).toBe("image/png")
    expect(servedImage.bytes.equals(Buffer.from(image))).toBe(true)

    const storedDocument = await receivedFromBob((m) => m.type === "document" && m.media?.filename === "notes.pdf")
    expect(storedDocument).toMatchObject({ caption: null, error: null, media: { mimetype: "application/pdf", size: document.length } })
    const servedDocument = await mediaOf(storedDocument.id)
    expect(servedDocument.headers.get("content-type")).toBe("application/pdf")
    expect(servedDocument.headers.get("content-disposition")).toContain("notes.pdf")
    expect(servedDocument.bytes.equals(Buffer.from(document))).toBe(true)

    const storedVoice = await receivedFromBob((m) => m.type === "audio")
    expect(storedVoice).toMatchObject({ error: null, media: { mimetype: "audio/ogg; codecs=opus", ptt: true, size: voice.length } })
    expect((await mediaOf(storedVoice.id)).bytes.equals(Buffer.from(voice))).toBe(true)
  })

  it("the contact's reaction to a message the gateway sent shows on it; taking it back empties it", async () => {
    const bob = peer.contact(BOB)
    const delivered = peer.waitFor<ReceivedMessage>("received", (m) => m.text === "react to me", 15_000)
    const sent = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: BOB, text: "react to me" } })
    const target = await delivered
    const inboundBefore = (await bobsInbox()).body.data.length
    expect(inboundBefore).toBeGreaterThan(0)

    await bob.react(ALICE, target.id, "👍")
    await reactionsOn(sent.body.messageId, [{ emoji: "👍", from: `${BOB}@c.us` }])
    await bob.react(ALICE, target.id, "")
    await reactionsOn(sent.body.messageId, [])
    // A reaction is a message on the wire, but no chat message: nothing new in the inbox.
    expect((await bobsInbox()).body.data.length).toBe(inboundBefore)
  })

  it("a reaction through the API reaches the contact, and the gateway's copy shows it", async () => {
    const bob = peer.contact(BOB)
    const id = await bob.send(ALICE, "react to this, alice")
    const theirs = await receivedFromBob((m) => m.text === "react to this, alice")
    const arrived = peer.waitFor<ReceivedMessage>("received", (m) => m.reaction?.targetId === id && m.reaction.emoji === "🔥", 15_000)
    const reacted = await gateway.call("POST", `/api/sessions/${sessionId}/messages/react`, {
      body: { chatId: `+${BOB}`, messageId: theirs.id, emoji: "🔥" }
    })
    expect(reacted.status).toBe(200)
    // Bob's phone sees a reaction to its own message.
    expect((await arrived).reaction?.key).toMatchObject({ id, fromMe: false })
    await reactionsOn(theirs.id, [{ emoji: "🔥", from: `${ALICE}@c.us` }])
  })

  it("marking a received message read sends WhatsApp a read receipt for it", async () => {
    const id = await peer.contact(BOB).send(ALICE, "read me")
    const theirs = await receivedFromBob((m) => m.text === "read me")
    const receipt = peer.waitFor<{ phone: string; id: string; type: string }>("receipt", (r) => r.id === id && r.type === "read", 15_000)
    const read = await gateway.call("POST", `/api/sessions/${sessionId}/messages/read`, { body: { chatId: `+${BOB}`, messageIds: [theirs.id] } })
    expect(read.body).toEqual({ chatId: `${BOB}@c.us`, read: 1 })
    expect(await receipt).toEqual({ phone: ALICE, id, type: "read" })
    expect((await message(theirs.id)).body.status).toBe("read")
  })

  it("groups through the API: create, read, rename, promote, a text every member decrypts, a member's message", async () => {
    peer.contact(CAROL, { name: "Carol" })
    const groups = `/api/sessions/${sessionId}/groups`
    const created = await gateway.call("POST", groups, { body: { subject: "Team", participants: [`+${BOB}`, CAROL] } })
    expect(created.status).toBe(201)
    const groupId = created.body.id as string
    expect(created.body.participants).toEqual(expect.arrayContaining([
      { id: `${ALICE}@c.us`, role: "superadmin" },
      { id: `${BOB}@c.us`, role: "member" },
      { id: `${CAROL}@c.us`, role: "member" }
    ]))
    expect((await gateway.call("GET", groups)).body.data.map((g: { id: string }) => g.id)).toContain(groupId)

    const renamed = await gateway.call("PUT", `${groups}/${groupId}/subject`, { body: { subject: "Team A" } })
    expect(renamed.body.subject).toBe("Team A")
    const promoted = await gateway.call("POST", `${groups}/${groupId}/participants/promote`, { body: { participants: [BOB] } })
    expect(promoted.body.results).toEqual([{ id: `${BOB}@c.us`, status: 200, ok: true }])
    expect((await gateway.call("GET", `${groups}/${groupId}`)).body.participants).toContainEqual({ id: `${BOB}@c.us`, role: "admin" })

    const decrypted = Promise.all([BOB, CAROL].map((phone) =>
      peer.waitFor<{ group?: string; to: string; text?: string }>("received", (m) => m.group === groupId && m.to === phone && m.text === "hello team", 15_000)))
    const sent = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: groupId, text: "hello team" } })
    expect(sent.status).toBe(201)
    expect(await decrypted).toHaveLength(2)

    await peer.contact(BOB).sendToGroup(groupId, "hi from bob")
    const inGroup = await eventually(
      () => gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=in&chatId=${groupId}`),
      (r) => r.body.data.some((m: { text: string }) => m.text === "hi from bob"),
      15_000
    )
    expect(inGroup.body.data[0]).toMatchObject({ chatId: groupId, from: `${BOB}@c.us` })
    const invite = await gateway.call("GET", `${groups}/${groupId}/invite-code`)
    expect(invite.body).toMatchObject({ groupId, url: expect.stringMatching(/^https:\/\/chat\.whatsapp\.com\//) })
  })

  it("contacts through the API: a number check with both ids, and the contacts the session learnt", async () => {
    const checked = await gateway.call("GET", `/api/sessions/${sessionId}/contacts/check/+${BOB}`)
    expect(checked.body).toEqual({ number: BOB, exists: true, chatId: `${BOB}@c.us`, lid: peer.contact(BOB).lid })
    const contacts = await gateway.call("GET", `/api/sessions/${sessionId}/contacts`)
    expect(contacts.body.data).toContainEqual(expect.objectContaining({ id: `${BOB}@c.us`, phone: `${BOB}@c.us`, lid: peer.contact(BOB).lid }))
  })

  it("labels through the API: a business account whose phone has not synced its app state yet gets a clear 409", async () => {
    // The peer links accounts as WhatsApp Business (platform smba) but has no app-state sync.
    const refused = await gateway.call("POST", `/api/sessions/${sessionId}/labels`, { body: { name: "VIP" } })
    expect([refused.status, refused.body.code]).toEqual([409, "APP_STATE_NOT_READY"])
  })

  it("keeps no auth files on disk: credentials and keys live in the database", () => {
    const files = readdirSync(dataDir, { recursive: true }).map(String)
    expect(files.length).toBeGreaterThan(0)
    // Besides the database only the media store's directory (it holds media, never credentials).
    expect(files.filter((name) => !/^switchboard\.db(-wal|-shm)?$/.test(name) && !/^media($|\/)/.test(name))).toEqual([])
  })

  it("the phone unlinks the device (401): logged_out, credentials gone, a new QR needed", async () => {
    peer.unlink(ALICE)
    const loggedOut = await statusIs("logged_out")
    expect(loggedOut.body.phone).toBeNull()
    expect((await gateway.call("GET", `/api/sessions/${sessionId}/me`)).status).toBe(409)
    await gateway.call("POST", `/api/sessions/${sessionId}/start`)
    await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}/qr`), (r) => r.status === 200, 15_000)
  })

  it("never prints Signal key material (libsignal logs whole sessions to the console)", () => {
    const leaks = printed.filter((line) => /privKey|rootKey|chainKey|Closing session|Opening session/.test(line))
    expect(leaks).toEqual([])
  })
})
