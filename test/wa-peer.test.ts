/**
 * The loopback WhatsApp Web peer (test/support/wa-peer) against the REAL Baileys client: QR
 * pairing, restart login, sending with a delivery receipt, receiving, the disconnect codes,
 * media both ways through the peer's HTTPS media server, reactions and read receipts.
 */
import { describe, expect, it } from "vitest"
import { Agent as HttpsAgent } from "node:https"
import * as curve from "libsignal/src/curve.js"
import {
  Curve,
  WA_CERT_DETAILS,
  downloadMediaMessage,
  proto,
  type AuthenticationState,
  type UserFacingSocketConfig,
  type WAMessage,
  type WASocket
} from "@whiskeysockets/baileys"
import { peerCertificates, type ReceivedMessage } from "./support/wa-peer/index.js"
import {
  memoryAuth,
  nextUpdate,
  onEvent,
  reloadCreds,
  statusCode,
  useRawPeer
} from "./support/wa-peer/raw-client.js"

const ALICE = "15551230001"
const BOB = "15551230002"

const loopback = useRawPeer()
const connect = (auth: AuthenticationState, config?: Partial<UserFacingSocketConfig>): WASocket => loopback.clients.connect(auth, config)
const pair = (phone: string) => loopback.clients.pair(phone)


describe("wa-peer: linking", () => {
  it("serves a noise certificate chain that verifies against the root Baileys is told to trust", () => {
    // Baileys rc14's Curve.verify never fails (libsignal returns false, it only catches throws),
    // so check the chain here with libsignal's boolean result
    const verify = (key: Uint8Array, message: Uint8Array, signature: Uint8Array) =>
      curve.verifySignature(Buffer.concat([Buffer.from([5]), key]), message, signature)
    const { intermediate, leaf } = proto.CertChain.decode(peerCertificates().chain)
    const details = proto.CertChain.NoiseCertificate.Details.decode(intermediate!.details!)
    expect(details.issuerSerial).toBe(WA_CERT_DETAILS.SERIAL)
    expect(verify(WA_CERT_DETAILS.PUBLIC_KEY, intermediate!.details!, intermediate!.signature!)).toBe(true)
    expect(verify(details.key!, leaf!.details!, leaf!.signature!)).toBe(true)
    expect(verify(Curve.generateKeyPair().public, intermediate!.details!, intermediate!.signature!)).toBe(false)
  })

  it("pairs through the QR, restarts on 515, logs in and sets creds.me", async () => {
    const { auth, sock, restartCode } = await pair(ALICE)
    expect(restartCode).toBe(515)
    const account = loopback.peer.accounts.get(ALICE)!
    expect(auth.creds.me?.id).toBe(`${ALICE}:${account.device}@s.whatsapp.net`)
    expect(auth.creds.me?.lid).toBe(`${account.lidUser}:${account.device}@lid`)
    expect(auth.creds.account?.accountSignatureKey).toBeTruthy()
    expect(sock.user?.id).toBe(auth.creds.me?.id)
    // the client uploaded its prekeys to the peer
    expect(account.clientKeys.preKeys.size).toBeGreaterThan(0)
    expect(loopback.peer.errors).toEqual([])
  })

  it("logs in again from saved creds without a QR", async () => {
    const { auth, sock } = await pair(ALICE)
    sock.end(undefined)
    const again = connect(reloadCreds(auth))
    let sawQr = false
    again.ev.on("connection.update", u => {
      if (u.qr) sawQr = true
    })
    await nextUpdate(again, u => u.connection === "open", "open from saved creds")
    expect(sawQr).toBe(false)
    expect(loopback.peer.isOnline(ALICE)).toBe(true)
  })

  it("links with a pairing code (requestPairingCode) instead of the QR", async () => {
    const auth = memoryAuth()
    const first = connect(auth)
    await nextUpdate(first, u => !!u.qr, "the first QR")
    const asked = loopback.peer.waitFor("pairing-code", phone => phone === ALICE)
    const code = await first.requestPairingCode(ALICE)
    await asked
    const restart = nextUpdate(first, u => u.connection === "close", "the 515 restart")
    const account = await loopback.peer.enterCode(code, { phone: ALICE })
    expect(statusCode(await restart)).toBe(515)
    first.end(undefined)
    const sock = connect(auth)
    await nextUpdate(sock, u => u.connection === "open", "open after code pairing")
    expect(auth.creds.me?.id).toBe(`${ALICE}:${account.device}@s.whatsapp.net`)
    expect(auth.creds.registered).toBe(true)
    // the code is spent: nobody waits for it any more
    await expect(loopback.peer.enterCode(code, { phone: ALICE })).rejects.toThrow(/no client is waiting/)
  })

  it("answers onWhatsApp from its directory, and sock.logout() unlinks the device", async () => {
    const { auth, sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const found = await sock.onWhatsApp(BOB, "15559999999")
    expect(found).toEqual([{ jid: bob.jid, exists: true }])
    const closed = nextUpdate(sock, u => u.connection === "close", "close on logout")
    await sock.logout()
    expect(statusCode(await closed)).toBe(401)
    await expect.poll(() => loopback.peer.accounts.get(ALICE)?.linked).toBe(false)
    const again = connect(reloadCreds(auth))
    expect(statusCode(await nextUpdate(again, u => u.connection === "close", "refused login"))).toBe(401)
  })

  it("refuses creds of a device that was unlinked (401 at login)", async () => {
    const { auth, sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close on unlink")
    loopback.peer.unlink(ALICE)
    expect(statusCode(await closed)).toBe(401)
    const again = connect(reloadCreds(auth))
    const refused = await nextUpdate(again, u => u.connection === "close", "refused login")
    expect(statusCode(refused)).toBe(401)
  })
})

describe("wa-peer: messages", () => {
  it("delivers a text to a contact's phone JID and reports DELIVERY_ACK", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const delivered = onEvent(
      sock,
      "messages.update",
      updates => updates.some(u => u.update.status === proto.WebMessageInfo.Status.DELIVERY_ACK),
      "the delivery receipt"
    )
    const received = loopback.peer.waitFor<{ text?: string }>("received", m => m.text === "hello bob")
    const sent = await sock.sendMessage(bob.jid, { text: "hello bob" })
    const message = await received
    expect(message).toMatchObject({ from: ALICE, to: BOB, toJid: bob.jid, id: sent?.key.id, text: "hello bob" })
    const updates = await delivered
    expect(updates.find(u => u.update.status === 3)?.key).toMatchObject({ id: sent?.key.id, remoteJid: bob.jid, fromMe: true })
    expect(bob.inbox.map(m => m.text)).toEqual(["hello bob"])
    // the contact reads it: status 4 (READ)
    const read = onEvent(
      sock,
      "messages.update",
      updates => updates.some(u => u.key.id === sent?.key.id && u.update.status === proto.WebMessageInfo.Status.READ),
      "the read receipt"
    )
    await bob.read(sent!.key.id!)
    await read
    // a second message rides the established session (type msg, no new prekey fetch)
    const second = loopback.peer.waitFor<{ text?: string }>("received", m => m.text === "again")
    await sock.sendMessage(bob.jid, { text: "again" })
    await second
    expect(loopback.peer.errors).toEqual([])
  })

  it("receives a contact's Signal message from its LID with the phone JID as the alternate", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB, { name: "Bob" })
    const upsert = onEvent(sock, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "hi alice"), "the upsert")
    const id = await bob.send(ALICE, "hi alice")
    const { messages, type } = await upsert
    const message = messages.find(m => m.message?.conversation === "hi alice")!
    expect(type).toBe("notify")
    expect(message.key).toMatchObject({ id, fromMe: false, remoteJid: bob.lid, remoteJidAlt: bob.jid })
    expect(message.pushName).toBe("Bob")
    // the client answers the contact with a delivery receipt
    await loopback.peer.waitFor<{ id: string }>("receipt", r => r.id === id)
    // and a reply on the now established session decrypts at the contact
    const reply = loopback.peer.waitFor<{ text?: string }>("received", m => m.text === "hi bob")
    await sock.sendMessage(bob.jid, { text: "hi bob" })
    await reply
    expect(loopback.peer.errors).toEqual([])
  })

  it("a message to another account of the peer reaches that account's phone", async () => {
    const alice = await pair(ALICE)
    await pair("15551230003")
    const received = loopback.peer.waitFor<{ text?: string; to: string }>("received", m => m.text === "hi carol")
    await alice.sock.sendMessage("15551230003@s.whatsapp.net", { text: "hi carol" })
    expect(await received).toMatchObject({ from: ALICE, to: "15551230003" })
    expect(loopback.peer.errors).toEqual([])
  })

  it("delivers messages sent while the client was away after its next login", async () => {
    const { auth, sock } = await pair(ALICE)
    sock.end(undefined)
    const bob = loopback.peer.contact(BOB)
    await bob.send(ALICE, "while you were out")
    const again = connect(reloadCreds(auth))
    const upsert = await onEvent(again, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "while you were out"), "the queued message")
    expect(upsert.messages[0]?.key.remoteJid).toBe(bob.lid)
  })
})

describe("wa-peer: disconnects", () => {
  it("unlink → 401 loggedOut", async () => {
    const { sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close")
    loopback.peer.unlink(ALICE)
    expect(statusCode(await closed)).toBe(401)
  })

  it("conflict → 440 connectionReplaced", async () => {
    const { sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close")
    loopback.peer.conflict(ALICE)
    expect(statusCode(await closed)).toBe(440)
  })

  it("drop → the socket closes with a retryable code, and the client can log in again", async () => {
    const { auth, sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close")
    loopback.peer.drop(ALICE)
    const code = statusCode(await closed)
    expect(code).not.toBe(401)
    expect(code).not.toBe(440)
    expect(code).toBe(428)
    const again = connect(auth)
    await nextUpdate(again, u => u.connection === "open", "open after the drop")
  })

  it("a second socket with the same creds replaces the first (440 on the old one)", async () => {
    const { auth, sock } = await pair(ALICE)
    const closed = nextUpdate(sock, u => u.connection === "close", "close of the old socket")
    const second = connect(auth)
    await nextUpdate(second, u => u.connection === "open", "open of the new socket")
    expect(statusCode(await closed)).toBe(440)
  })
})

// Small files with real magic numbers. Only the PNG decodes (Baileys thumbnails it with sharp);
// for the others Baileys' thumbnail / duration probes fail quietly, or are skipped by passing
// `seconds`. Lengths are not multiples of 16, so the AES padding is exercised.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64")
const PDF = Buffer.concat([Buffer.from("%PDF-1.4\n%\xE2\xE3\xCF\xD3\n"), Buffer.alloc(200_001, 7), Buffer.from("\n%%EOF\n")])
const OGG = Buffer.concat([Buffer.from("OggS\x00\x02"), Buffer.alloc(20, 0), Buffer.from("\x01\x13OpusHead"), Buffer.alloc(300, 1)])
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from("ftypisom\x00\x00\x02\x00isommp41"), Buffer.alloc(999, 2)])

/** Alice's client sends `content` to Bob; resolves with what Bob's phone got and decrypted. */
const sendToBob = async (content: Parameters<WASocket["sendMessage"]>[1]) => {
  const { sock } = await pair(ALICE)
  const bob = loopback.peer.contact(BOB)
  const arrived = loopback.peer.waitFor<ReceivedMessage>("received", m => m.to === BOB && m.media !== undefined)
  const sent = await sock.sendMessage(bob.jid, content)
  const received = await arrived
  expect(received.id).toBe(sent?.key.id)
  return { received, media: await loopback.peer.downloadMedia(received) }
}

/** Bob sends media to Alice's client; resolves with the upserted message. */
const mediaFromBob = async (sock: WASocket, send: () => Promise<string>): Promise<WAMessage> => {
  const upsert = onEvent(sock, "messages.upsert", u => u.messages.some(m => !!m.message && !m.key.fromMe), "the media upsert")
  const id = await send()
  const message = (await upsert).messages.find(m => m.key.id === id)
  expect(message).toBeDefined()
  return message!
}

describe("wa-peer: media", () => {
  it("client → contact: an image with a caption is uploaded over HTTPS and decrypts to the same bytes", async () => {
    const { received, media } = await sendToBob({ image: PNG, mimetype: "image/png", caption: "one pixel" })
    expect(media).toMatchObject({ kind: "image", mimetype: "image/png", caption: "one pixel", ptt: false })
    expect(media.bytes.equals(PNG)).toBe(true)
    const image = received.message.imageMessage!
    expect(new URL(image.url!).host).toBe(loopback.peer.mediaHost)
    expect(image.jpegThumbnail?.length).toBeGreaterThan(0) // sharp made it from the real PNG
    expect(loopback.peer.media.requests).toContainEqual(expect.objectContaining({ method: "POST", status: 200, path: expect.stringMatching(/^\/mms\/image\//) }))
  })

  it("client → contact: a video with a caption", async () => {
    const { media } = await sendToBob({ video: MP4, mimetype: "video/mp4", caption: "clip", seconds: 1 })
    expect(media).toMatchObject({ kind: "video", mimetype: "video/mp4", caption: "clip" })
    expect(media.bytes.equals(MP4)).toBe(true)
  })

  it("client → contact: a voice note arrives as audio with ptt: true", async () => {
    const { received, media } = await sendToBob({ audio: OGG, mimetype: "audio/ogg; codecs=opus", ptt: true, seconds: 1 })
    expect(media).toMatchObject({ kind: "audio", mimetype: "audio/ogg; codecs=opus", ptt: true })
    expect(media.bytes.equals(OGG)).toBe(true)
    expect(received.message.audioMessage?.seconds).toBe(1)
  })

  it("client → contact: a document keeps its fileName", async () => {
    const { media } = await sendToBob({ document: PDF, mimetype: "application/pdf", fileName: "report.pdf", caption: "Q3" })
    expect(media).toMatchObject({ kind: "document", mimetype: "application/pdf", fileName: "report.pdf", caption: "Q3" })
    expect(media.bytes.equals(PDF)).toBe(true)
  })

  it("contact → client: Baileys downloads and decrypts an image from the peer's media server", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const message = await mediaFromBob(sock, () => bob.sendMedia(ALICE, { kind: "image", bytes: PNG, mimetype: "image/png", caption: "from bob" }))
    expect(message.key).toMatchObject({ remoteJid: bob.lid, remoteJidAlt: bob.jid, fromMe: false })
    const image = message.message?.imageMessage
    expect(image).toMatchObject({ mimetype: "image/png", caption: "from bob", directPath: expect.stringMatching(/^\/v\//) })
    expect(image?.mediaKey?.length).toBe(32)
    const bytes = await downloadMediaMessage(message, "buffer", { options: loopback.clients.fetchOptions })
    expect(bytes.equals(PNG)).toBe(true)
    expect(loopback.peer.media.requests).toContainEqual(expect.objectContaining({ method: "GET", status: 200 }))
  })

  it("contact → client: a document with its fileName, whole and as a byte range", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const send = () => bob.sendMedia(ALICE, { kind: "document", bytes: PDF, mimetype: "application/pdf", fileName: "report.pdf" })
    const message = await mediaFromBob(sock, send)
    expect(message.message?.documentMessage).toMatchObject({ fileName: "report.pdf", mimetype: "application/pdf" })
    expect(Number(message.message?.documentMessage?.fileLength)).toBe(PDF.length)
    const bytes = await downloadMediaMessage(message, "buffer", { options: loopback.clients.fetchOptions })
    expect(bytes.equals(PDF)).toBe(true)
    // a partial download asks for a Range (from the block before, which serves as the IV)
    const part = await downloadMediaMessage(message, "buffer", { startByte: 1_000, endByte: 5_000, options: loopback.clients.fetchOptions })
    expect(part.equals(PDF.subarray(1_000, 5_000))).toBe(true)
    expect(loopback.peer.media.requests).toContainEqual(expect.objectContaining({ method: "GET", status: 206, range: expect.stringMatching(/^bytes=\d+-\d+$/) }))
  })

  it("the media server's certificate is verified: without trusting loopback.peer.mediaCa uploads and downloads fail", async () => {
    const { sock } = await loopback.clients.pair(ALICE, { fetchAgent: new HttpsAgent() })
    const bob = loopback.peer.contact(BOB)
    // Baileys logs the TLS error and reports only "Media upload failed on all hosts"
    await expect(sock.sendMessage(bob.jid, { image: PNG, mimetype: "image/png" })).rejects.toThrow(/upload failed/i)
    expect(loopback.peer.media.requests.filter(r => r.method === "POST")).toEqual([])
    const message = await mediaFromBob(sock, () => bob.sendMedia(ALICE, { kind: "image", bytes: PNG, mimetype: "image/png" }))
    // global fetch's default trust store: the self-signed certificate is refused
    await expect(downloadMediaMessage(message, "buffer", {})).rejects.toMatchObject({ cause: { code: "DEPTH_ZERO_SELF_SIGNED_CERT" } })
    expect(loopback.peer.media.requests.filter(r => r.method === "GET")).toEqual([])
  })
})

describe("wa-peer: reactions and read receipts", () => {
  it("client → contact: a reaction names the contact's message, and '' removes it", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const upsert = onEvent(sock, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "react to this"), "the upsert")
    const id = await bob.send(ALICE, "react to this")
    const target = (await upsert).messages.find(m => m.key.id === id)!
    for (const emoji of ["👍", ""]) {
      const reaction = loopback.peer.waitFor<ReceivedMessage>("received", m => m.reaction?.targetId === id && m.reaction.emoji === emoji)
      await sock.sendMessage(bob.jid, { react: { text: emoji, key: target.key } })
      // from the client's point of view the target is not its own message
      expect((await reaction).reaction?.key.fromMe).toBe(false)
    }
    expect(loopback.peer.errors).toEqual([])
  })

  it("contact → client: messages.reaction carries the target key from the client's view, and '' removes", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const delivered = loopback.peer.waitFor<ReceivedMessage>("received", m => m.text === "react to me")
    const sent = await sock.sendMessage(bob.jid, { text: "react to me" })
    await delivered
    const targetId = sent!.key.id!
    for (const emoji of ["❤️", ""]) {
      const reacted = onEvent(sock, "messages.reaction", rs => rs.some(r => r.key.id === targetId && (r.reaction.text ?? "") === emoji), `reaction '${emoji}'`)
      const reactionId = await bob.react(ALICE, targetId, emoji)
      const { key, reaction } = (await reacted).find(r => r.key.id === targetId)!
      // Baileys rewrites the key: fromMe = the client's own message, remoteJid = the chat
      expect(key).toMatchObject({ id: targetId, fromMe: true, remoteJid: bob.lid })
      expect(reaction.key).toMatchObject({ id: reactionId, fromMe: false, remoteJid: bob.lid })
    }
  })

  it("contact → client: a reaction to the contact's own message has fromMe false", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const upsert = onEvent(sock, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "mine"), "the upsert")
    const id = await bob.send(ALICE, "mine")
    await upsert
    const reacted = onEvent(sock, "messages.reaction", rs => rs.some(r => r.key.id === id), "the reaction")
    await bob.react(ALICE, id, "😂")
    expect((await reacted)[0]).toMatchObject({ key: { id, fromMe: false, remoteJid: bob.lid }, reaction: { text: "😂" } })
  })

  it("sock.readMessages sends a read receipt the peer records", async () => {
    const { sock } = await pair(ALICE)
    const bob = loopback.peer.contact(BOB)
    const upsert = onEvent(sock, "messages.upsert", u => u.messages.some(m => m.message?.conversation === "read me"), "the upsert")
    const id = await bob.send(ALICE, "read me")
    const message = (await upsert).messages.find(m => m.key.id === id)!
    const read = loopback.peer.waitFor<{ id: string; type: string }>("receipt", r => r.id === id && r.type === "read")
    await sock.readMessages([message.key])
    expect(await read).toEqual({ phone: ALICE, id, type: "read" })
  })
})
