import * as fs from "node:fs"
import * as path from "node:path"
import { Duration, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sandboxPhoneOf } from "../src/runtime/engines/sandbox/SandboxNetwork.js"
import { eventually, readySession, type TestGateway, useGateway } from "./support/gateway.js"
import { png } from "./support/mediaSamples.js"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.js"

/**
 * The chat list over real HTTP between sandbox sessions (real SQLite): unread counts through
 * sends and reads, the account's own changes announced as chat.update, filters, paging where
 * chats carry several labels, and the phone's history imported without an event per message.
 */

const webhookSettings = {
  webhooks: { timeout: Duration.seconds(2), allowPrivate: true, concurrency: 8, perWebhookConcurrency: 2, perWebhookConcurrencyMax: 2, eventRetention: Duration.hours(1) }
}
const watched = ["chat.update", "session.history", "message.received"]

const listening = async (gateway: TestGateway, receiver: WebhookReceiver) => {
  const hook = await gateway.call("POST", "/api/webhooks", { body: { url: receiver.url, events: watched } })
  receiver.setSecret(hook.body.secret)
}

/** A session created (not started) whose sandbox phone already exists on the network. */
const createdSession = async (gateway: TestGateway, name: string) => {
  const created = await gateway.call("POST", "/api/sessions", { body: { name } })
  return { id: created.body.id as string, phone: sandboxPhoneOf(created.body.id) }
}

const startAndWait = async (gateway: TestGateway, sessionId: string) => {
  await gateway.call("POST", `/api/sessions/${sessionId}/start`)
  await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "ready")
}

describe("the chat list between sandbox sessions", () => {
  const gateway = useGateway(webhookSettings)
  let alice: { id: string; phone: string }
  let bob: { id: string; phone: string }
  let receiver: WebhookReceiver
  const chatOf = (session: { phone: string }) => `${session.phone}@c.us`

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    await listening(gateway(), receiver)
    alice = await readySession(gateway(), "chats-alice")
    bob = await readySession(gateway(), "chats-bob")
  })
  afterAll(() => receiver.close())

  const call = (method: string, sessionId: string, route: string, body?: unknown) =>
    gateway().call(method, `/api/sessions/${sessionId}${route}`, body === undefined ? {} : { body })
  const chat = (sessionId: string, chatId: string) => call("GET", sessionId, `/chats/${chatId}`)
  const send = async (from: { id: string }, to: { phone: string }, text: string) => {
    const sent = await call("POST", from.id, "/messages/send-text", { chatId: to.phone, text })
    expect(sent.status).toBe(201)
    return sent.body.messageId as string
  }
  const chatUpdates = (sessionId: string, chatId: string) =>
    receiver.deliveries.filter((d) => d.event === "chat.update" && d.sessionId === sessionId && d.data.chatId === chatId).map((d) => d.data.changes)

  it("counts unread messages until the chat is read; the account's own writing keeps its side at 0", async () => {
    await send(alice, bob, "one")
    await send(alice, bob, "two")
    const unread = await eventually(() => chat(bob.id, chatOf(alice)), (r) => r.body.unreadCount === 2)
    expect(unread.body).toMatchObject({ chatId: chatOf(alice), type: "person", archived: false, pinned: false, mutedUntil: null, labels: [] })
    expect(unread.body.lastMessage).toMatchObject({ text: "two", fromMe: false, source: "live" })
    const own = await chat(alice.id, chatOf(bob))
    expect(own.body).toMatchObject({ unreadCount: 0, lastMessage: { text: "two", fromMe: true } })

    const read = await call("POST", bob.id, "/messages/read", { chatId: alice.phone })
    expect(read.body).toEqual({ chatId: chatOf(alice), read: 2 })
    expect((await chat(bob.id, chatOf(alice))).body.unreadCount).toBe(0)
    await eventually(async () => chatUpdates(bob.id, chatOf(alice)), (changes) => changes.some((c) => c.unreadCount === 0))

    await send(bob, alice, "three")
    const aliceSide = await eventually(() => chat(alice.id, chatOf(bob)), (r) => r.body.unreadCount === 1)
    expect(aliceSide.body.lastMessage).toMatchObject({ text: "three", fromMe: false })
    expect((await chat(bob.id, chatOf(alice))).body).toMatchObject({ unreadCount: 0, lastMessage: { text: "three", fromMe: true } })
    // Writing in a chat reads it, as on WhatsApp: Alice answering clears her badge.
    await send(alice, bob, "four")
    expect((await chat(alice.id, chatOf(bob))).body.unreadCount).toBe(0)
    await eventually(() => chat(bob.id, chatOf(alice)), (r) => r.body.unreadCount === 1)
  })

  it("archives, pins, mutes and marks unread, each announced as chat.update with only what changed", async () => {
    const path = `/chats/${chatOf(bob)}`
    const archived = await call("POST", alice.id, `${path}/archive`, { archived: true })
    expect(archived.status).toBe(200)
    expect(archived.body).toMatchObject({ chatId: chatOf(bob), archived: true, pinned: false })
    const onlyArchived = await call("GET", alice.id, "/chats?archived=true")
    expect(onlyArchived.body.data.map((c: any) => c.chatId)).toEqual([chatOf(bob)])
    expect((await call("GET", alice.id, "/chats?archived=false")).body.data.map((c: any) => c.chatId)).not.toContain(chatOf(bob))

    expect((await call("POST", alice.id, `${path}/pin`, { pinned: true })).body.pinned).toBe(true)
    const before = Date.now()
    const muted = await call("POST", alice.id, `${path}/mute`, { hours: 2 })
    const until = Date.parse(muted.body.mutedUntil)
    expect(until - before).toBeGreaterThanOrEqual(2 * 3_600_000 - 1_000)
    expect(until - before).toBeLessThanOrEqual(2 * 3_600_000 + 5_000)
    expect((await call("POST", alice.id, `${path}/mute`, { until: null })).body.mutedUntil).toBeNull()
    const explicit = await call("POST", alice.id, `${path}/mute`, { until: "2031-01-01T09:00:00Z" })
    expect(explicit.body.mutedUntil).toBe("2031-01-01T09:00:00.000Z")

    const unread = await call("POST", alice.id, `${path}/unread`)
    expect(unread.body.unreadCount).toBe(-1)
    expect((await call("GET", alice.id, "/chats?unread=true")).body.data.map((c: any) => c.chatId)).toContain(chatOf(bob))
    // Archiving an archived chat changes nothing, so nothing is announced.
    await call("POST", alice.id, `${path}/archive`, { archived: true })

    const changes = await eventually(async () => chatUpdates(alice.id, chatOf(bob)), (found) => found.length >= 6)
    expect(changes).toEqual([
      { archived: true },
      { pinned: true },
      { mutedUntil: muted.body.mutedUntil },
      { mutedUntil: null },
      { mutedUntil: "2031-01-01T09:00:00.000Z" },
      { unreadCount: -1 }
    ])
    await call("POST", alice.id, "/messages/read", { chatId: bob.phone })
    expect((await chat(alice.id, chatOf(bob))).body.unreadCount).toBe(0)
  })

  it("lists a chat's messages like …/messages?chatId=, paged the same way", async () => {
    const viaChat = await call("GET", bob.id, `/chats/${chatOf(alice)}/messages?limit=2&page=1`)
    const viaMessages = await call("GET", bob.id, `/messages?chatId=${chatOf(alice)}&limit=2&page=1`)
    expect(viaChat.status).toBe(200)
    expect(viaChat.body).toEqual(viaMessages.body)
    expect(viaChat.body.data.pagination).toMatchObject({ page: 1, limit: 2, total: 4 })
  })

  it("refuses what does not exist or is not well-formed, in the API's error shape", async () => {
    const stranger = "15559990001@c.us"
    for (const [method, route, body] of [
      ["GET", `/chats/${stranger}`, undefined],
      ["POST", `/chats/${stranger}/archive`, { archived: true }],
      ["POST", `/chats/${stranger}/unread`, undefined],
      ["DELETE", `/chats/${stranger}`, undefined],
      ["GET", `/chats/${stranger}/messages`, undefined],
      ["POST", `/chats/${stranger}/history`, { count: 5 }]
    ] as const) {
      const refused = await call(method, alice.id, route, body)
      expect(refused.status, `${method} ${route}`).toBe(404)
      expect(refused.body).toMatchObject({ statusCode: 404, error: "Not Found", code: "CHAT_NOT_FOUND" })
    }
    const noSession = await gateway().call("GET", "/api/sessions/no-such-session/chats")
    expect(noSession.status).toBe(404)
    expect(noSession.body.code).toBe("SESSION_NOT_FOUND")
    for (const [route, body] of [
      [`/chats/${chatOf(bob)}/history`, { count: 0 }],
      [`/chats/${chatOf(bob)}/history`, { count: 501 }],
      [`/chats/${chatOf(bob)}/mute`, { hours: 0 }],
      [`/chats/${chatOf(bob)}/mute`, { until: "tomorrow" }],
      [`/chats/${chatOf(bob)}/mute`, { until: "2026-02-31T00:00:00Z" }],
      [`/chats/${chatOf(bob)}/mute`, { until: "2020-01-01T00:00:00Z" }],
      [`/chats/${chatOf(bob)}/archive`, { archived: "yes" }]
    ] as const) {
      const refused = await call("POST", alice.id, route, body)
      expect(refused.status, `${route} ${JSON.stringify(body)}`).toBe(400)
      expect(refused.body.code).toBe("VALIDATION_FAILED")
    }
    expect((await call("GET", alice.id, "/chats?type=robot")).status).toBe(400)
    const viewer = await gateway().call("POST", "/api/auth/api-keys", { body: { name: "chat-viewer", role: "viewer" } })
    const asViewer = (method: string, route: string, body?: unknown) =>
      gateway().call(method, `/api/sessions/${alice.id}${route}`, { key: viewer.body.key, ...(body === undefined ? {} : { body }) })
    expect((await asViewer("GET", "/chats")).status).toBe(200)
    expect((await asViewer("POST", `/chats/${chatOf(bob)}/pin`, { pinned: false })).status).toBe(403)
    // What the OpenAPI document declares for these endpoints is checked with the rest in http-api.test.ts.
  })

  it("pages chats by chat however many labels each carries (rule 11), filters by label and type", async () => {
    const owner = await readySession(gateway(), "chats-labels")
    await Effect.runPromise(gateway().network.setBusiness(owner.id, true))
    const echoes = ["15550001001", "15550001002", "15550001003", "15550001004", "15550001005"]
    for (const phone of echoes) await send(owner, { phone }, `hello ${phone}`)
    await eventually(() => call("GET", owner.id, "/chats"), (r) => r.body.data.length === echoes.length)
    const labels = []
    for (const name of ["a", "b", "c"]) labels.push((await call("POST", owner.id, "/labels", { name })).body)
    for (const phone of echoes) {
      for (const label of labels) await call("POST", owner.id, `/labels/chat/${phone}`, { labelId: label.id })
    }
    const pages = []
    for (const page of [1, 2, 3]) pages.push((await call("GET", owner.id, `/chats?limit=2&page=${page}`)).body.data)
    expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1])
    expect(pages[0].pagination).toEqual({ page: 1, limit: 2, total: 5, total_pages: 3 })
    const listed = pages.flatMap((p) => p.items)
    expect(new Set(listed.map((c: any) => c.chatId)).size).toBe(5)
    expect(listed.every((c: any) => c.labels.map((l: any) => l.name).join() === "a,b,c")).toBe(true)
    // Most recent activity first: the echo replies came in the order of the sends.
    const activity = listed.map((c: any) => c.updatedAt)
    expect([...activity].sort().reverse()).toEqual(activity)

    await call("DELETE", owner.id, `/labels/chat/${echoes[0]}/${labels[0].id}`)
    const withA = await call("GET", owner.id, `/chats?labelId=${labels[0].id}&limit=10`)
    expect(withA.body.data.pagination.total).toBe(4)
    expect(withA.body.data.items.map((c: any) => c.chatId)).not.toContain(`${echoes[0]}@c.us`)

    const group = await call("POST", owner.id, "/groups", { subject: "Chat list group", participants: [bob.phone] })
    await call("POST", owner.id, "/messages/send-text", { chatId: group.body.id, text: "hi group" })
    const groups = await eventually(() => call("GET", owner.id, "/chats?type=group"), (r) => r.body.data.length === 1)
    expect(groups.body.data[0]).toMatchObject({ chatId: group.body.id, type: "group", name: "Chat list group" })
    expect((await call("GET", owner.id, "/chats?type=person")).body.data).toHaveLength(5)
  })

  it("deletes a chat with its messages and their media, announced as deleted; a new message starts it again", async () => {
    const image = await call("POST", alice.id, "/messages/send-image", { chatId: bob.phone, media: { data: Buffer.from(png()).toString("base64") } })
    expect(image.status).toBe(201)
    const copy = await eventually(() => chat(bob.id, chatOf(alice)), (r) => r.body.lastMessage?.type === "image")
    const mediaFile = path.join(gateway().settings.dataDir, "media", bob.id, copy.body.lastMessage.id)
    await eventually(async () => fs.existsSync(mediaFile), (exists) => exists)

    const deleted = await call("DELETE", bob.id, `/chats/${chatOf(alice)}`)
    expect(deleted.status).toBe(204)
    const gone = await chat(bob.id, chatOf(alice))
    expect(gone.status).toBe(404)
    expect(gone.body.code).toBe("CHAT_NOT_FOUND")
    expect((await call("GET", bob.id, `/messages?chatId=${chatOf(alice)}`)).body.data).toEqual([])
    await eventually(async () => chatUpdates(bob.id, chatOf(alice)), (changes) => changes.some((c) => c.deleted === true))
    await eventually(async () => fs.existsSync(mediaFile), (exists) => !exists)

    await send(alice, bob, "again")
    const back = await eventually(() => chat(bob.id, chatOf(alice)), (r) => r.status === 200)
    expect(back.body).toMatchObject({ unreadCount: 1, archived: false, lastMessage: { text: "again" } })
  })

  it("a session linking an account that has conversations imports them as history: counted once, not announced per message", async () => {
    const carol = await createdSession(gateway(), "chats-carol")
    const sent = []
    for (const text of ["before 1", "before 2", "before 3"]) sent.push(await send(alice, carol, text))
    await startAndWait(gateway(), carol.id)

    const history = await eventually(
      async () => receiver.deliveries.filter((d) => d.event === "session.history" && d.sessionId === carol.id),
      (found) => found.length > 0
    )
    expect(history.map((d) => d.data)).toEqual([{ chats: 1, messages: 3, progress: 100 }])
    const imported = await call("GET", carol.id, `/chats/${chatOf(alice)}/messages`)
    expect(imported.body.data.map((m: any) => [m.text, m.source, m.fromMe, m.status])).toEqual([
      ["before 3", "history", false, "read"],
      ["before 2", "history", false, "read"],
      ["before 1", "history", false, "read"]
    ])
    expect((await chat(carol.id, chatOf(alice))).body).toMatchObject({ unreadCount: 0, lastMessage: { text: "before 3" } })

    // A live message after it is announced as usual; none of the history was.
    await send(alice, carol, "live now")
    await eventually(async () => receiver.deliveries.filter((d) => d.event === "message.received" && d.sessionId === carol.id), (found) => found.length > 0)
    const announced = receiver.deliveries.filter((d) => d.event === "message.received" && d.sessionId === carol.id).map((d) => d.data.message.text)
    expect(announced).toEqual(["live now"])
  })

  it("with readReceipts off, reading clears the unread count here but sends no read receipt", async () => {
    const quiet = await call("PUT", bob.id, "/settings", { readReceipts: false })
    expect(quiet.body.readReceipts).toBe(false)
    try {
      const unseen = await send(alice, bob, "read quietly")
      await eventually(() => chat(bob.id, chatOf(alice)), (r) => r.body.unreadCount >= 1)
      await eventually(() => call("GET", alice.id, `/messages/${unseen}`), (r) => r.body.status === "delivered")
      await call("POST", bob.id, "/messages/read", { chatId: alice.phone })
      expect((await chat(bob.id, chatOf(alice))).body.unreadCount).toBe(0)
      // Alice's message never turns read: no receipt went out.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect((await call("GET", alice.id, `/messages/${unseen}`)).body.status).toBe("delivered")

      await call("PUT", bob.id, "/settings", { readReceipts: true })
      const seen = await send(alice, bob, "read aloud")
      await eventually(() => call("GET", alice.id, `/messages/${seen}`), (r) => r.body.status === "delivered")
      await call("POST", bob.id, "/messages/read", { chatId: alice.phone })
      await eventually(() => call("GET", alice.id, `/messages/${seen}`), (r) => r.body.status === "read")
    } finally {
      await call("PUT", bob.id, "/settings", { readReceipts: true })
    }
  })
})

describe("history with HISTORY_SYNC off, and asked for on demand", () => {
  const gateway = useGateway({ ...webhookSettings, historySync: "off" })
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    await listening(gateway(), receiver)
  })
  afterAll(() => receiver.close())

  it("imports nothing on linking; POST …/history brings the older messages as history", async () => {
    const erin = await readySession(gateway(), "history-erin")
    const dave = await createdSession(gateway(), "history-dave")
    const send = (text: string) => gateway().call("POST", `/api/sessions/${erin.id}/messages/send-text`, { body: { chatId: dave.phone, text } })
    for (const text of ["old 1", "old 2", "old 3"]) await send(text)
    await startAndWait(gateway(), dave.id)
    await send("new")
    const chatPath = `/api/sessions/${dave.id}/chats/${erin.phone}@c.us`
    await eventually(() => gateway().call("GET", `${chatPath}/messages`), (r) => r.status === 200 && r.body.data.length === 1)
    expect(receiver.deliveries.filter((d) => d.event === "session.history")).toEqual([])

    const asked = await gateway().call("POST", `${chatPath}/history`, { body: { count: 2 } })
    expect(asked.status).toBe(202)
    expect(asked.body).toEqual({ chatId: `${erin.phone}@c.us`, count: 2, requested: true })
    const messages = await eventually(() => gateway().call("GET", `${chatPath}/messages`), (r) => r.body.data.length === 3)
    expect(messages.body.data.map((m: any) => [m.text, m.source])).toEqual([["new", "live"], ["old 3", "history"], ["old 2", "history"]])
    const history = await eventually(async () => receiver.deliveries.filter((d) => d.event === "session.history"), (found) => found.length > 0)
    expect(history.map((d) => d.data)).toEqual([{ chats: 1, messages: 2, progress: 100 }])
    // The import left the unread count as the live message made it.
    expect((await gateway().call("GET", chatPath)).body).toMatchObject({ unreadCount: 1, lastMessage: { text: "new" } })
  })
})
