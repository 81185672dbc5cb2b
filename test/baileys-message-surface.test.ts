import * as http from "node:http"
import type { AddressInfo } from "node:net"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, TEST_KEY } from "./support/gateway.js"
import { base64 } from "./support/mediaSamples.js"
import { sessionApi, useLinkedBaileysSession } from "./support/baileysSession.js"
import { contentOf, contextInfoOf, forwardedMessage, linkPreviewMessage, pollOf } from "./support/wa-peer/index.js"

/**
 * Issue 17 end to end on ENGINE=baileys, part one: what the session sends (locations, contact
 * cards, stickers, polls, texts with a link preview) is the WhatsApp message the contact's
 * phone decrypts; votes go both ways, sealed with the poll's secret; what the contact sends of
 * each kind is stored with its content. Only the REST API drives the gateway; the contacts are
 * the loopback WhatsApp Web peer's.
 */

const ALICE = "15551230001"
const BOB = "15551230002"
const bobChat = `${BOB}@c.us`
const aliceChat = `${ALICE}@c.us`

describe("ENGINE=baileys: sending and receiving every kind of message through the REST API", () => {
  const linked = useLinkedBaileysSession(ALICE)
  const api = sessionApi(linked)
  const bob = () => linked().peer.contact(BOB, { name: "Bob" })
  beforeAll(() => void bob())

  it("send-location: the contact gets a locationMessage with the place, quoting what it answers", async () => {
    const questionId = await bob().send(ALICE, "where are you?")
    const question = await api.receivedFrom(BOB, (m) => m.text === "where are you?")
    const { messageId, received } = await api.sendTo(BOB, "/messages/send-location", {
      chatId: `+${BOB}`,
      quotedMessageId: question.id,
      latitude: 52.3731,
      longitude: 4.8922,
      name: "Dam Square",
      address: "Dam, Amsterdam",
      url: "https://example.org/dam"
    }, (m) => m.kind === "location")
    expect(received.message.locationMessage).toMatchObject({
      degreesLatitude: 52.3731,
      degreesLongitude: 4.8922,
      name: "Dam Square",
      address: "Dam, Amsterdam",
      url: "https://example.org/dam"
    })
    expect(contextInfoOf(received.message)).toMatchObject({ stanzaId: questionId, quotedMessage: { conversation: "where are you?" } })
    expect((await api.message(messageId)).body).toMatchObject({ type: "location", location: { latitude: 52.3731, name: "Dam Square" } })

    // A reply to the session's own location quotes it as one.
    const reply = await api.sendTo(BOB, "/messages/send-text", { chatId: BOB, text: "there", quotedMessageId: messageId }, (m) => m.text === "there")
    expect(contextInfoOf(reply.received.message)).toMatchObject({ stanzaId: received.id, participant: `${ALICE}@s.whatsapp.net`, quotedMessage: { locationMessage: {} } })
  })

  it("send-contact: one card is a contactMessage, several a contactsArrayMessage, with tappable vCards", async () => {
    const one = await api.sendTo(BOB, "/messages/send-contact", {
      chatId: BOB,
      contacts: [{ name: "Ada Lovelace", phone: "+44 20 7946 0001", organization: "Analytical, Ltd", email: "ada@example.org" }]
    }, (m) => m.kind === "contact")
    expect(one.received.message.contactMessage?.displayName).toBe("Ada Lovelace")
    const vcard = one.received.message.contactMessage?.vcard ?? ""
    expect(vcard).toContain("TEL;type=CELL;type=VOICE;waid=442079460001:+442079460001")
    expect(vcard).toContain("ada@example.org")

    const several = await api.sendTo(BOB, "/messages/send-contact", {
      chatId: BOB,
      contacts: [{ name: "Ada Lovelace", phone: "+442079460001" }, { name: "Grace Hopper", phone: "+1 555 010 0002" }]
    }, (m) => m.kind === "contacts")
    const array = several.received.message.contactsArrayMessage
    expect(array?.displayName).toBe("2 contacts")
    expect(array?.contacts?.map((card) => card.displayName)).toEqual(["Ada Lovelace", "Grace Hopper"])
    expect(array?.contacts?.[1]?.vcard).toContain("waid=15550100002:+15550100002")
  })

  it("send-sticker with a PNG: the contact downloads a 512×512 WebP stickerMessage", async () => {
    const picture = await sharp({ create: { width: 64, height: 32, channels: 4, background: { r: 250, g: 90, b: 20, alpha: 1 } } }).png().toBuffer()
    const { messageId, received } = await api.sendTo(BOB, "/messages/send-sticker", { chatId: BOB, media: { data: base64(picture) } }, (m) => m.media === "sticker")
    expect(received.message.stickerMessage?.mimetype).toBe("image/webp")
    const sticker = await linked().peer.downloadMedia(received)
    const shape = await sharp(sticker.bytes).metadata()
    expect({ format: shape.format, width: shape.width, height: shape.height }).toEqual({ format: "webp", width: 512, height: 512 })
    expect((await api.message(messageId)).body).toMatchObject({ type: "sticker", media: { mimetype: "image/webp" } })
  })

  it("send-poll: a pollCreationMessageV3 with a 32-byte secret, the one the gateway keeps (its own vote opens with it)", async () => {
    const { messageId, received } = await api.sendTo(BOB, "/messages/send-poll", {
      chatId: BOB,
      name: "Lunch?",
      options: ["Pizza", "Sushi", "Salad"]
    }, (m) => m.kind === "poll")
    expect(received.message.pollCreationMessageV3).toBeTruthy()
    const poll = pollOf(contentOf(received.message))
    expect(poll).toMatchObject({ name: "Lunch?", options: ["Pizza", "Sushi", "Salad"], selectableCount: 1 })
    expect(poll?.secret?.length).toBe(32)

    // The secret is not shown over REST: the session's vote on its own poll is sealed with the
    // secret the gateway stored, and Bob opens it with the one that came with the poll.
    const voted = await api.post("/messages/poll-vote", { chatId: BOB, messageId, options: ["Sushi"] })
    expect(voted.status).toBe(200)
    const votes = await eventually(async () => bob().votes().filter((vote) => vote.pollId === received.id), (found) => found.length === 1, 15_000)
    expect(votes[0]).toMatchObject({ from: ALICE, options: ["Sushi"], unknown: 0 })

    const several = await api.sendTo(BOB, "/messages/send-poll", {
      chatId: BOB,
      name: "Toppings?",
      options: ["Cheese", "Olives", "Basil"],
      selectableCount: 2
    }, (m) => m.kind === "poll")
    expect(several.received.message.pollCreationMessage).toMatchObject({ name: "Toppings?", selectableOptionsCount: 2 })
  })

  it("poll-vote: the contact votes on the session's poll, changes and withdraws; the results and poll.vote events follow", async () => {
    const { messageId, received } = await api.sendTo(BOB, "/messages/send-poll", {
      chatId: BOB,
      name: "Dinner?",
      options: ["Curry", "Tacos", "Soup"]
    }, (m) => m.kind === "poll" && m.message.pollCreationMessageV3?.name === "Dinner?")
    const results = () => api.get(`/messages/${messageId}/poll`)
    const votesOf = (r: { body: any }) => r.body.options.map((o: { votes: number }) => o.votes).join(",")

    await bob().vote(ALICE, received.id, ["Tacos"])
    const first = await eventually(results, (r) => r.body.totalVoters === 1, 15_000)
    expect(first.body).toEqual({
      name: "Dinner?",
      selectableCount: 1,
      options: [
        { name: "Curry", votes: 0, voters: [] },
        { name: "Tacos", votes: 1, voters: [bobChat] },
        { name: "Soup", votes: 0, voters: [] }
      ],
      totalVoters: 1
    })
    const [event] = await api.delivered("poll.vote", (data) => data.messageId === messageId)
    expect(event!.data).toEqual({ messageId, chatId: bobChat, voter: bobChat, options: ["Tacos"] })

    await bob().vote(ALICE, received.id, ["Soup"])
    await eventually(results, (r) => votesOf(r) === "0,0,1", 15_000)
    await api.delivered("poll.vote", (data) => data.messageId === messageId && data.options[0] === "Soup")

    await bob().vote(ALICE, received.id, [])
    const withdrawn = await eventually(results, (r) => r.body.totalVoters === 0, 15_000)
    expect(votesOf(withdrawn)).toBe("0,0,0")
    expect((await api.message(messageId)).body.poll.totalVoters).toBe(0)
  })

  it("poll-vote on the contact's poll: stored with its options, and the contact decrypts the session's choice", async () => {
    const pollId = await bob().sendPoll(ALICE, { name: "Where?", options: ["Here", "There"] })
    const stored = await api.receivedFrom(BOB, (m) => m.type === "poll" && m.poll?.name === "Where?")
    expect(stored).toMatchObject({
      chatId: bobChat,
      from: bobChat,
      fromMe: false,
      poll: { name: "Where?", selectableCount: 1, options: [{ name: "Here", votes: 0, voters: [] }, { name: "There", votes: 0, voters: [] }], totalVoters: 0 }
    })
    const voted = await api.post("/messages/poll-vote", { chatId: `+${BOB}`, messageId: stored.id, options: ["There"] })
    expect(voted.body).toEqual({ messageId: stored.id, chatId: bobChat, options: ["There"] })
    const votes = await eventually(async () => bob().votes().filter((vote) => vote.pollId === pollId), (found) => found.length === 1, 15_000)
    expect(votes[0]).toMatchObject({ from: ALICE, options: ["There"], unknown: 0 })
    // The session's own vote shows in its copy's results.
    const results = await api.get(`/messages/${stored.id}/poll`)
    expect(results.body.options[1]).toEqual({ name: "There", votes: 1, voters: [aliceChat] })
  })

  describe("send-text with a link: the gateway fetches the preview and sends it with the text", () => {
    let site: http.Server
    let base = ""
    const fetched: Array<string> = []
    beforeAll(async () => {
      const cover = await sharp({ create: { width: 400, height: 200, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer()
      const page = `<!doctype html><html><head><meta charset="utf-8"><title>Loopback news</title>
<meta property="og:title" content="Loopback news"><meta property="og:description" content="A page served on 127.0.0.1">
<meta property="og:image" content="/cover.png"></head><body><p>hello</p></body></html>`
      site = http.createServer((request, response) => {
        fetched.push(request.url ?? "")
        if (request.url === "/cover.png") return void response.writeHead(200, { "content-type": "image/png" }).end(cover)
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page)
      })
      await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve))
      base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
    })
    afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())))

    it("the contact gets an extendedTextMessage with the link's title, description and thumbnail; the sent copy keeps it", async () => {
      const url = `${base}/article`
      const text = `have a look: ${url}`
      const { messageId, received } = await api.sendTo(BOB, "/messages/send-text", { chatId: BOB, text }, (m) => m.text === text)
      const extended = received.message.extendedTextMessage
      expect(extended).toMatchObject({ text, matchedText: url, title: "Loopback news", description: "A page served on 127.0.0.1" })
      expect((await sharp(Buffer.from(extended!.jpegThumbnail!)).metadata()).format).toBe("jpeg")
      // The gateway fetched the page and its image itself (Baileys was handed the preview).
      expect(fetched).toEqual(["/article", "/cover.png"])
      const sent = await api.message(messageId)
      expect(sent.body.linkPreview).toMatchObject({ url, title: "Loopback news", description: "A page served on 127.0.0.1" })
      expect(sent.body.linkPreview.thumbnail).toBe(Buffer.from(extended!.jpegThumbnail!).toString("base64"))
    })

    it("linkPreview: false sends the bare text", async () => {
      const text = `no preview: ${base}/article`
      const before = fetched.length
      const { received } = await api.sendTo(BOB, "/messages/send-text", { chatId: BOB, text, linkPreview: false }, (m) => m.text === text)
      expect(received.message.extendedTextMessage).toEqual({ text })
      expect(fetched.length).toBe(before)
    })
  })

  it("what the contact sends is stored with its content: a location, one card and several, a sticker, a link preview, a forward", async () => {
    await bob().sendLocation(ALICE, { latitude: 48.8584, longitude: 2.2945, name: "Eiffel Tower", address: "Paris" })
    const location = await api.receivedFrom(BOB, (m) => m.type === "location")
    expect(location.location).toEqual({ latitude: 48.8584, longitude: 2.2945, name: "Eiffel Tower", address: "Paris", url: null })

    await bob().sendContacts(ALICE, [{ name: "Carol", phone: "15551230003", organization: "Acme" }])
    const card = await api.receivedFrom(BOB, (m) => m.type === "contact" && m.contacts.length === 1)
    expect(card.contacts.map(({ vcard: _, ...fields }: any) => fields)).toEqual([{ name: "Carol", phone: "+15551230003", organization: "Acme", email: null }])
    await bob().sendContacts(ALICE, [{ name: "Carol", phone: "15551230003" }, { name: "Dave", phone: "+1 555 123 0004" }])
    const cards = await api.receivedFrom(BOB, (m) => m.type === "contact" && m.contacts.length === 2)
    expect(cards.contacts.map((c: any) => [c.name, c.phone])).toEqual([["Carol", "+15551230003"], ["Dave", "+15551230004"]])

    const webp = await sharp({ create: { width: 512, height: 512, channels: 4, background: { r: 0, g: 200, b: 80, alpha: 1 } } }).webp().toBuffer()
    await bob().sendSticker(ALICE, { bytes: webp })
    const sticker = await api.receivedFrom(BOB, (m) => m.type === "sticker")
    expect(sticker).toMatchObject({ error: null, media: { mimetype: "image/webp", size: webp.length } })
    const served = await fetch(`${linked().gateway.baseUrl}/api/sessions/${linked().sessionId}/messages/${sticker.id}/media`, { headers: { "x-api-key": TEST_KEY } })
    expect(Buffer.from(await served.arrayBuffer()).equals(webp)).toBe(true)

    const text = "read https://example.org/news today"
    await bob().sendMessage(ALICE, linkPreviewMessage({ text, url: "https://example.org/news", title: "News", description: "Today's news" }))
    const previewed = await api.receivedFrom(BOB, (m) => m.text === text)
    expect(previewed.linkPreview).toEqual({ url: "https://example.org/news", title: "News", description: "Today's news" })

    await bob().sendMessage(ALICE, forwardedMessage({ conversation: "passed along" }))
    expect((await api.receivedFrom(BOB, (m) => m.text === "passed along")).forwarded).toBe(true)
    expect(linked().peer.errors).toEqual([])
  })
})
