import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, useGateway } from "./support/gateway.js"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.js"

/**
 * Every kind of message over real HTTP between sandbox sessions: locations, contact cards,
 * polls and votes, forwards, edits, deletions, stars, pins and presence, with the events they
 * raise delivered (signed) to a webhook.
 */
describe("the message surface between sandbox sessions", () => {
  const gateway = useGateway({
    webhooks: {
      timeout: Duration.seconds(2),
      allowPrivate: true,
      concurrency: 8,
      perWebhookConcurrency: 2,
      perWebhookConcurrencyMax: 2,
      eventRetention: Duration.hours(1)
    }
  })
  let alice: { id: string; phone: string }
  let bob: { id: string; phone: string }
  let receiver: WebhookReceiver
  const aliceChat = () => `${alice.phone}@c.us`
  const bobChat = () => `${bob.phone}@c.us`

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    alice = await readySession(gateway(), "surface-alice")
    bob = await readySession(gateway(), "surface-bob")
    const hook = await gateway().call("POST", "/api/webhooks", {
      body: { url: receiver.url, events: ["message.edited", "message.revoked", "poll.vote", "presence.update"] }
    })
    receiver.setSecret(hook.body.secret)
  })
  afterAll(() => receiver.close())

  const post = (sessionId: string, route: string, body: unknown) =>
    gateway().call("POST", `/api/sessions/${sessionId}${route}`, { body })
  const message = (sessionId: string, messageId: string) => gateway().call("GET", `/api/sessions/${sessionId}/messages/${messageId}`)

  /** The message as the other side stored it, once it arrived. */
  const received = async (sessionId: string, from: string, match: (m: any) => boolean) => {
    const inbox = await eventually(
      () => gateway().call("GET", `/api/sessions/${sessionId}/messages?direction=in&chatId=${from}`),
      (r) => r.body.data.some(match)
    )
    return inbox.body.data.find(match)
  }

  /** Alice sends a text to Bob; both sides' ids, once it reached him. */
  const exchange = async (text: string) => {
    const sent = await post(alice.id, "/messages/send-text", { chatId: bob.phone, text })
    expect(sent.status).toBe(201)
    const copy = await received(bob.id, aliceChat(), (m) => m.text === text)
    return { aliceId: sent.body.messageId as string, bobId: copy.id as string }
  }

  const delivered = (event: string, match: (data: any) => boolean) =>
    eventually(async () => receiver.deliveries.filter((d) => d.event === event && match(d.data)), (found) => found.length > 0)

  it("sends a location, and the recipient stores it with its place", async () => {
    const sent = await post(alice.id, "/messages/send-location", {
      chatId: bob.phone,
      latitude: 52.3731,
      longitude: 4.8922,
      name: "Dam Square",
      address: "Dam, Amsterdam"
    })
    expect(sent.status).toBe(201)
    const own = await message(alice.id, sent.body.messageId)
    expect(own.body).toMatchObject({ type: "location", location: { latitude: 52.3731, longitude: 4.8922, name: "Dam Square", url: null } })
    const copy = await received(bob.id, aliceChat(), (m) => m.type === "location")
    expect(copy.location).toEqual({ latitude: 52.3731, longitude: 4.8922, name: "Dam Square", address: "Dam, Amsterdam", url: null })
  })

  it("sends contact cards as vCards built from the fields; the recipient reads them back", async () => {
    const sent = await post(alice.id, "/messages/send-contact", {
      chatId: bob.phone,
      contacts: [
        { name: "Ada Lovelace", phone: "+44 20 7946 0001", organization: "Analytical, Ltd", email: "ada@example.org" },
        { name: "Grace Hopper", phone: "+1 555 010 0002" }
      ]
    })
    expect(sent.status).toBe(201)
    const own = await message(alice.id, sent.body.messageId)
    expect(own.body.type).toBe("contact")
    expect(own.body.contacts[0].vcard).toContain("TEL;type=CELL;type=VOICE;waid=442079460001:+442079460001")
    const copy = await received(bob.id, aliceChat(), (m) => m.type === "contact")
    expect(copy.contacts.map(({ vcard: _, ...card }: any) => card)).toEqual([
      { name: "Ada Lovelace", phone: "+442079460001", organization: "Analytical, Ltd", email: "ada@example.org" },
      { name: "Grace Hopper", phone: "+15550100002", organization: null, email: null }
    ])
  })

  it("a poll from Alice, votes from Bob, changed and withdrawn: Alice's results count his latest choice", async () => {
    const sent = await post(alice.id, "/messages/send-poll", {
      chatId: bob.phone,
      name: "Lunch?",
      options: ["pizza", "sushi", "salad"],
      selectableCount: 2
    })
    expect(sent.status).toBe(201)
    const pollId = sent.body.messageId
    const copy = await received(bob.id, aliceChat(), (m) => m.type === "poll")
    expect(copy.poll).toEqual({
      name: "Lunch?",
      selectableCount: 2,
      options: ["pizza", "sushi", "salad"].map((name) => ({ name, votes: 0, voters: [] })),
      totalVoters: 0
    })
    const results = () => gateway().call("GET", `/api/sessions/${alice.id}/messages/${pollId}/poll`)
    const vote = (options: Array<string>) => post(bob.id, "/messages/poll-vote", { chatId: alice.phone, messageId: copy.id, options })

    const first = await vote(["pizza", "salad"])
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ messageId: copy.id, chatId: aliceChat(), options: ["pizza", "salad"] })
    const afterFirst = await eventually(results, (r) => r.body.totalVoters === 1)
    expect(afterFirst.body.options).toEqual([
      { name: "pizza", votes: 1, voters: [bobChat()] },
      { name: "sushi", votes: 0, voters: [] },
      { name: "salad", votes: 1, voters: [bobChat()] }
    ])
    await delivered("poll.vote", (data) => data.messageId === pollId && data.voter === bobChat())

    expect((await vote(["sushi"])).status).toBe(200)
    const changed = await eventually(results, (r) => r.body.options[1].votes === 1)
    expect(changed.body.options.map((o: any) => o.votes)).toEqual([0, 1, 0])
    // Bob sees his own vote on his copy too.
    expect((await gateway().call("GET", `/api/sessions/${bob.id}/messages/${copy.id}/poll`)).body.options[1].voters).toEqual([bobChat()])

    expect((await vote([])).status).toBe(200)
    const withdrawn = await eventually(results, (r) => r.body.totalVoters === 0)
    expect(withdrawn.body.options.map((o: any) => o.votes)).toEqual([0, 0, 0])
    // The poll's message carries the same results.
    expect((await message(alice.id, pollId)).body.poll.totalVoters).toBe(0)
  })

  it("refuses bad polls and votes with the contract's codes", async () => {
    const bad: Array<[unknown, number, string]> = [
      [{ chatId: bob.phone, name: "one option", options: ["a"] }, 400, "VALIDATION_FAILED"],
      [{ chatId: bob.phone, name: "twins", options: ["a", "a"] }, 400, "VALIDATION_FAILED"],
      [{ chatId: bob.phone, name: "too many picks", options: ["a", "b"], selectableCount: 3 }, 400, "VALIDATION_FAILED"],
      [{ chatId: bob.phone, name: "", options: ["a", "b"] }, 400, "VALIDATION_FAILED"],
      [{ chatId: bob.phone, name: "thirteen", options: Array.from({ length: 13 }, (_, i) => `o${i}`) }, 400, "VALIDATION_FAILED"]
    ]
    for (const [body, status, code] of bad) {
      const refused = await post(alice.id, "/messages/send-poll", body)
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([status, code])
    }
    const sent = await post(alice.id, "/messages/send-poll", { chatId: bob.phone, name: "Refusals", options: ["yes", "no"] })
    expect(sent.status).toBe(201)
    const copy = await received(bob.id, aliceChat(), (m) => m.poll?.name === "Refusals")
    const votes: Array<[unknown, number, string]> = [
      [{ chatId: alice.phone, messageId: copy.id, options: ["maybe"] }, 400, "UNKNOWN_POLL_OPTION"],
      [{ chatId: alice.phone, messageId: copy.id, options: ["yes", "no"] }, 400, "TOO_MANY_POLL_OPTIONS"],
      [{ chatId: alice.phone, messageId: "no-such-message", options: ["yes"] }, 404, "MESSAGE_NOT_FOUND"],
      [{ chatId: "15550009999", messageId: copy.id, options: ["yes"] }, 404, "MESSAGE_NOT_FOUND"]
    ]
    for (const [body, status, code] of votes) {
      const refused = await post(bob.id, "/messages/poll-vote", body)
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([status, code])
    }
    const { bobId: textId } = await exchange("not a poll")
    const notPoll = await gateway().call("GET", `/api/sessions/${bob.id}/messages/${textId}/poll`)
    expect([notPoll.status, notPoll.body.code]).toEqual([404, "POLL_NOT_FOUND"])
    const voteOnText = await post(bob.id, "/messages/poll-vote", { chatId: alice.phone, messageId: textId, options: ["yes"] })
    expect([voteOnText.status, voteOnText.body.code]).toEqual([400, "NOT_A_POLL"])
    const unknown = await gateway().call("GET", `/api/sessions/${alice.id}/messages/no-such-message/poll`)
    expect([unknown.status, unknown.body.code]).toEqual([404, "MESSAGE_NOT_FOUND"])
  })

  it("an edit reaches Bob's copy, which keeps the old text in edits; only one's own messages can be edited", async () => {
    const { aliceId, bobId } = await exchange("see you at 5")
    const edited = await gateway().call("PUT", `/api/sessions/${alice.id}/messages/${aliceId}`, { body: { text: "see you at 6" } })
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ id: aliceId, text: "see you at 6", edits: [{ text: "see you at 5" }] })
    expect(edited.body.editedAt).not.toBeNull()
    const copy = await eventually(() => message(bob.id, bobId), (r) => r.body.text === "see you at 6")
    expect(copy.body.edits.map((e: any) => e.text)).toEqual(["see you at 5"])
    const events = await delivered("message.edited", (data) => data.messageId === bobId)
    expect(events[0]!.data).toEqual({ messageId: bobId, chatId: aliceChat(), text: "see you at 6", previousText: "see you at 5", by: aliceChat() })
    await delivered("message.edited", (data) => data.messageId === aliceId && data.by === aliceChat())

    const notMine = await gateway().call("PUT", `/api/sessions/${bob.id}/messages/${bobId}`, { body: { text: "forged" } })
    expect([notMine.status, notMine.body.code]).toEqual([409, "EDIT_NOT_ALLOWED"])
    const empty = await gateway().call("PUT", `/api/sessions/${alice.id}/messages/${aliceId}`, { body: { text: "" } })
    expect([empty.status, empty.body.code]).toEqual([400, "VALIDATION_FAILED"])
    const unknown = await gateway().call("PUT", `/api/sessions/${alice.id}/messages/nope`, { body: { text: "x" } })
    expect([unknown.status, unknown.body.code]).toEqual([404, "MESSAGE_NOT_FOUND"])
  })

  it("an edit or a pin of a message still being sent waits for the network to take it, then goes through", async () => {
    // typingMs holds the send for 1.5 s (Alice shows "typing"), the message pending meanwhile.
    const sent = await post(alice.id, "/messages/send-text", { chatId: bob.phone, text: "on my way", typingMs: 1500 })
    expect(sent.status).toBe(201)
    const messageId = sent.body.messageId as string
    expect((await message(alice.id, messageId)).body.status).toBe("pending")
    const [edited, pinned] = await Promise.all([
      gateway().call("PUT", `/api/sessions/${alice.id}/messages/${messageId}`, { body: { text: "on my way, 10 min" } }),
      gateway().call("POST", `/api/sessions/${alice.id}/messages/${messageId}/pin`, { body: { pinned: true } })
    ])
    expect([edited.status, pinned.status]).toEqual([200, 200])
    expect(edited.body).toMatchObject({ text: "on my way, 10 min", edits: [{ text: "on my way" }] })
    expect(edited.body.status).not.toBe("pending")
    await received(bob.id, aliceChat(), (m) => m.text === "on my way, 10 min")
  })

  it("deleting for everyone revokes Bob's copy too; deleting for me hides it here only", async () => {
    const { aliceId, bobId } = await exchange("oops, wrong chat")
    const revoked = await gateway().call("DELETE", `/api/sessions/${alice.id}/messages/${aliceId}`)
    expect(revoked.status).toBe(200)
    expect(revoked.body).toMatchObject({ id: aliceId, revoked: true, text: null })
    const copy = await eventually(() => message(bob.id, bobId), (r) => r.body.revoked === true)
    expect(copy.body.text).toBeNull()
    await delivered("message.revoked", (data) => data.messageId === bobId && data.by === aliceChat())

    const other = await exchange("keep this one")
    // Bob's default for Alice's message is "me": gone from Bob's history, still there for Alice.
    const hidden = await gateway().call("DELETE", `/api/sessions/${bob.id}/messages/${other.bobId}`)
    expect(hidden.body).toMatchObject({ revoked: true })
    const forEveryone = await gateway().call("DELETE", `/api/sessions/${bob.id}/messages/${other.bobId}?for=everyone`)
    expect([forEveryone.status, forEveryone.body.code]).toEqual([409, "REVOKE_NOT_ALLOWED"])
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await message(alice.id, other.aliceId)).body).toMatchObject({ revoked: false, text: "keep this one" })
    const badScope = await gateway().call("DELETE", `/api/sessions/${alice.id}/messages/${other.aliceId}?for=nobody`)
    expect(badScope.status).toBe(400)
  })

  it("forwards a message as a new one marked forwarded; stars and pins", async () => {
    const { bobId } = await exchange("worth sharing")
    const forwarded = await post(bob.id, `/messages/${bobId}/forward`, { chatId: alice.phone })
    expect(forwarded.status).toBe(201)
    expect(forwarded.body.messageId).not.toBe(bobId)
    expect((await message(bob.id, forwarded.body.messageId)).body).toMatchObject({ text: "worth sharing", forwarded: true, fromMe: true })
    const copy = await received(alice.id, bobChat(), (m) => m.text === "worth sharing")
    expect(copy.forwarded).toBe(true)

    const starred = await post(bob.id, `/messages/${bobId}/star`, { starred: true })
    expect([starred.status, starred.body.starred]).toEqual([200, true])
    const pinned = await post(bob.id, `/messages/${bobId}/pin`, { pinned: true, durationHours: 24 })
    expect([pinned.status, pinned.body.pinned]).toEqual([200, true])
    const badDuration = await post(bob.id, `/messages/${bobId}/pin`, { pinned: true, durationHours: 5 })
    expect(badDuration.status).toBe(400)
    const unknown = await post(bob.id, "/messages/nope/forward", { chatId: alice.phone })
    expect([unknown.status, unknown.body.code]).toEqual([404, "MESSAGE_NOT_FOUND"])
  })

  it("typing from Alice shows as Bob's presence.update; subscribing tells Bob her presence", async () => {
    const typing = await post(alice.id, "/presence", { chatId: bob.phone, state: "typing" })
    expect(typing.status).toBe(200)
    await delivered("presence.update", (data) => data.chatId === aliceChat() && data.state === "typing")
    const known = await gateway().call("GET", `/api/sessions/${bob.id}/presence/${alice.phone}`)
    expect(known.body).toMatchObject({ chatId: aliceChat(), state: "typing" })

    const subscribed = await post(bob.id, "/presence/subscribe", { chatId: alice.phone })
    expect(subscribed.body).toEqual({ chatId: aliceChat(), subscribed: true })
    expect((await post(alice.id, "/presence", { state: "offline" })).status).toBe(200)
    const offline = await eventually(
      () => gateway().call("GET", `/api/sessions/${bob.id}/presence/${aliceChat()}`),
      (r) => r.body.state === "offline"
    )
    expect(offline.body.lastSeen).not.toBeNull()

    const never = await gateway().call("GET", `/api/sessions/${alice.id}/presence/15550001234`)
    expect([never.status, never.body.code]).toEqual([404, "PRESENCE_UNKNOWN"])
    const bad = await post(alice.id, "/presence", { state: "typing" })
    expect(bad.status).toBe(400)
    expect(receiver.problems).toEqual([])
  })

  it("echo contacts vote for a poll's first option and answer a location with the same", async () => {
    const echo = "15550004242"
    const poll = await post(alice.id, "/messages/send-poll", { chatId: echo, name: "Echo poll", options: ["first", "second"] })
    const results = await eventually(
      () => gateway().call("GET", `/api/sessions/${alice.id}/messages/${poll.body.messageId}/poll`),
      (r) => r.body.totalVoters === 1
    )
    expect(results.body.options[0]).toEqual({ name: "first", votes: 1, voters: [`${echo}@c.us`] })
    await post(alice.id, "/messages/send-location", { chatId: echo, latitude: 1.5, longitude: -2.25 })
    const answer = await received(alice.id, `${echo}@c.us`, (m) => m.type === "location")
    expect(answer.location).toMatchObject({ latitude: 1.5, longitude: -2.25 })
  })

  it("send-bulk carries the new kinds; history pages messages with their votes and edits", async () => {
    const bulk = await post(alice.id, "/messages/send-bulk", {
      messages: [
        { type: "location", chatId: bob.phone, latitude: 10, longitude: 20 },
        { type: "contact", chatId: bob.phone, contacts: [{ name: "Bulk Contact", phone: "+15550100003" }] },
        { type: "poll", chatId: bob.phone, name: "Bulk poll", options: ["a", "b"] },
        { type: "text", chatId: bob.phone, text: "bulk text" }
      ]
    })
    expect(bulk.status).toBe(202)
    const badItem = await post(alice.id, "/messages/send-bulk", { messages: [{ type: "poll", chatId: bob.phone, name: "x", options: ["a"] }] })
    expect(badItem.status).toBe(400)
    const poll = await received(bob.id, aliceChat(), (m) => m.poll?.name === "Bulk poll")
    const text = await received(bob.id, aliceChat(), (m) => m.text === "bulk text")
    await post(bob.id, "/messages/poll-vote", { chatId: alice.phone, messageId: poll.id, options: ["b"] })
    const aliceText = (await gateway().call("GET", `/api/sessions/${alice.id}/messages?direction=out&limit=1`)).body.data.items[0]
    expect(aliceText.text).toBe("bulk text")
    await gateway().call("PUT", `/api/sessions/${alice.id}/messages/${aliceText.id}`, { body: { text: "bulk text, edited" } })
    await eventually(() => message(bob.id, text.id), (r) => r.body.edits.length === 1)

    // Newest first, two per page: the edited text, then the poll with its vote, then the card.
    const first = await eventually(
      () => gateway().call("GET", `/api/sessions/${alice.id}/messages?direction=out&limit=2`),
      (r) => r.body.data.items[1]?.poll?.totalVoters === 1
    )
    expect(first.body.data.items.map((m: any) => m.type)).toEqual(["text", "poll"])
    expect(first.body.data.items[0].edits.map((e: any) => e.text)).toEqual(["bulk text"])
    expect(first.body.data.items[1].poll.options[1]).toEqual({ name: "b", votes: 1, voters: [bobChat()] })
    const second = await gateway().call("GET", `/api/sessions/${alice.id}/messages?direction=out&limit=2&page=2`)
    expect(second.body.data.items.map((m: any) => m.type)).toEqual(["contact", "location"])
  })
})
