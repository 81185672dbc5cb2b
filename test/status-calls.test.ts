import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Duration, Effect, Exit, Scope } from "effect"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BaileysEngineLive } from "../src/runtime/engines/baileys/BaileysEngine.js"
import { eventually, readySession, startGatewayWith, TEST_KEY, useGateway } from "./support/gateway.js"
import { base64, mp4, png } from "./support/mediaSamples.js"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.js"

/**
 * Per-session settings, status updates and calls over real HTTP between sandbox sessions (real
 * SQLite), with the events they raise delivered to a webhook.
 */
describe("settings, status updates and calls between sandbox sessions", () => {
  const gateway = useGateway({
    webhooks: { timeout: Duration.seconds(2), allowPrivate: true, concurrency: 8, perWebhookConcurrency: 2, perWebhookConcurrencyMax: 2, eventRetention: Duration.hours(1) }
  })
  let alice: { id: string; phone: string }
  let bob: { id: string; phone: string }
  let carol: { id: string; phone: string }
  let receiver: WebhookReceiver

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    alice = await readySession(gateway(), "sc-alice")
    bob = await readySession(gateway(), "sc-bob")
    carol = await readySession(gateway(), "sc-carol")
    const hook = await gateway().call("POST", "/api/webhooks", {
      body: { url: receiver.url, events: ["status.received", "call.received", "call.update", "message.received"] }
    })
    receiver.setSecret(hook.body.secret)
  })
  afterAll(() => receiver.close())

  const call = (method: string, sessionId: string, route: string, body?: unknown, key?: string) =>
    gateway().call(method, `/api/sessions/${sessionId}${route}`, { ...(body === undefined ? {} : { body }), ...(key === undefined ? {} : { key }) })
  const delivered = (event: string, match: (data: any) => boolean) =>
    eventually(async () => receiver.deliveries.filter((d) => d.event === event && match(d.data)), (found) => found.length > 0)
  const feed = (sessionId: string) => call("GET", sessionId, "/status").then((r) => r.body.data as Array<any>)
  const callLog = (sessionId: string) => call("GET", sessionId, "/calls").then((r) => r.body.data as Array<any>)
  const newKey = async (role: string) => (await gateway().call("POST", "/api/auth/api-keys", { body: { name: `${role} key`, role } })).body.key as string

  describe("settings", () => {
    it("starts at the defaults; PUT changes the fields named, keeps the others, and answers the whole settings", async () => {
      expect((await call("GET", carol.id, "/settings")).body).toEqual({
        rejectCalls: false,
        rejectCallMessage: null,
        readReceipts: true,
        markOnlineOnConnect: false,
        historySync: "recent"
      })
      const changed = await call("PUT", carol.id, "/settings", { readReceipts: false, historySync: "full" })
      expect(changed.status).toBe(200)
      expect(changed.body).toMatchObject({ readReceipts: false, historySync: "full", rejectCalls: false, markOnlineOnConnect: false })
      const again = await call("PUT", carol.id, "/settings", { markOnlineOnConnect: true })
      expect(again.body).toMatchObject({ readReceipts: false, historySync: "full", markOnlineOnConnect: true })
      expect((await call("GET", carol.id, "/settings")).body).toEqual(again.body)
    })

    it("refuses invalid values, unknown sessions and viewers' changes, each with its code", async () => {
      const invalid = await call("PUT", carol.id, "/settings", { historySync: "everything" })
      expect(invalid.status).toBe(400)
      expect(invalid.body.code).toBe("VALIDATION_FAILED")
      const tooLong = await call("PUT", carol.id, "/settings", { rejectCallMessage: "x".repeat(4097) })
      expect(tooLong.status).toBe(400)
      const unknown = await gateway().call("GET", "/api/sessions/nobody/settings")
      expect(unknown.status).toBe(404)
      expect(unknown.body.code).toBe("SESSION_NOT_FOUND")
      const viewer = await newKey("viewer")
      expect((await call("GET", carol.id, "/settings", undefined, viewer)).status).toBe(200)
      const refused = await call("PUT", carol.id, "/settings", { rejectCalls: true }, viewer)
      expect(refused.status).toBe(403)
      expect(refused.body.code).toBe("FORBIDDEN")
      expect((await call("GET", carol.id, "/settings")).body.rejectCalls).toBe(false)
    })
  })

  describe("status updates", () => {
    it("a text status to a contact list reaches that contact's feed, announced as status.received; the poster's feed has it fromMe", async () => {
      const posted = await call("POST", alice.id, "/status/text", { text: "off to the beach", backgroundColor: "#336699", font: 2, contacts: [bob.phone] })
      expect(posted.status).toBe(201)
      expect(posted.body).toMatchObject({ chatId: "status@broadcast", status: "pending" })
      const seen = await eventually(() => feed(bob.id), (items) => items.some((m) => m.text === "off to the beach"))
      expect(seen.find((m) => m.text === "off to the beach")).toMatchObject({ chatId: "status@broadcast", from: `${alice.phone}@c.us`, fromMe: false })
      const event = await delivered("status.received", (d) => d.message.text === "off to the beach")
      expect(event[0]!.sessionId).toBe(bob.id)
      // a status update is no chat message: not announced as one
      expect(receiver.deliveries.some((d) => d.event === "message.received" && d.data.message.text === "off to the beach")).toBe(false)
      const own = await feed(alice.id)
      expect(own.find((m) => m.id === posted.body.messageId)).toMatchObject({ fromMe: true, text: "off to the beach" })
      // carol was not in the list
      expect((await feed(carol.id)).some((m) => m.text === "off to the beach")).toBe(false)
    })

    it("status updates stay out of the chat list, on the poster's side and the viewer's", async () => {
      const posted = await call("POST", alice.id, "/status/text", { text: "no chat for this", contacts: [bob.phone] })
      expect(posted.status).toBe(201)
      await eventually(() => feed(bob.id), (items) => items.some((m) => m.text === "no chat for this"))
      for (const session of [alice, bob]) {
        const chats = (await call("GET", session.id, "/chats")).body.data as Array<{ chatId: string }>
        expect(chats.map((c) => c.chatId)).not.toContain("status@broadcast")
      }
    })

    it("without contacts a status goes to every contact the session knows; an image status arrives with its media", async () => {
      // carol writes to alice: alice now knows carol (and bob, from before? not yet: bob never wrote to alice)
      await call("POST", carol.id, "/messages/send-text", { chatId: alice.phone, text: "hi alice" })
      await eventually(() => call("GET", alice.id, "/contacts"), (r) => r.body.data.some((c: any) => c.id === `${carol.phone}@c.us`))
      const image = png("a status image")
      const posted = await call("POST", alice.id, "/status/image", { media: { data: base64(image) }, caption: "sunset" })
      expect(posted.status).toBe(201)
      const seen = await eventually(() => feed(carol.id), (items) => items.some((m) => m.caption === "sunset"))
      const update = seen.find((m) => m.caption === "sunset")
      expect(update).toMatchObject({ type: "image", chatId: "status@broadcast", media: { mimetype: "image/png", size: image.length } })
      const bytes = await fetch(`${gateway().baseUrl}/api/sessions/${carol.id}/messages/${update.id}/media`, { headers: { "x-api-key": TEST_KEY } })
      expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(image)
    })

    it("an image status as multipart, with its contacts as one comma-separated field", async () => {
      const form = new FormData()
      form.append("caption", "by form")
      form.append("contacts", `${bob.phone}, ${carol.phone}`)
      form.append("file", new Blob([png("form image")], { type: "image/png" }), "status.png")
      const response = await fetch(`${gateway().baseUrl}/api/sessions/${alice.id}/status/image`, { method: "POST", headers: { "x-api-key": TEST_KEY }, body: form })
      expect(response.status).toBe(201)
      await eventually(() => feed(bob.id), (items) => items.some((m) => m.caption === "by form"))
      await eventually(() => feed(carol.id), (items) => items.some((m) => m.caption === "by form"))
    })

    it("a video status as JSON arrives with its media", async () => {
      const video = mp4("a status video")
      const posted = await call("POST", alice.id, "/status/video", { media: { data: base64(video), mimetype: "video/mp4" }, caption: "waves", contacts: [bob.phone] })
      expect(posted.status).toBe(201)
      const seen = await eventually(() => feed(bob.id), (items) => items.some((m) => m.caption === "waves"))
      const update = seen.find((m) => m.caption === "waves")
      expect(update).toMatchObject({ type: "video", chatId: "status@broadcast", media: { mimetype: "video/mp4", size: video.length } })
      const bytes = await fetch(`${gateway().baseUrl}/api/sessions/${bob.id}/messages/${update.id}/media`, { headers: { "x-api-key": TEST_KEY } })
      expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(video)
    })

    it("lists the status updates of the last 24 hours only; an older one stays readable as a message", async () => {
      await call("POST", alice.id, "/status/text", { text: "yesterday's news", contacts: [bob.phone] })
      await call("POST", alice.id, "/status/text", { text: "still fresh", contacts: [bob.phone] })
      const items = await eventually(() => feed(bob.id), (items) => ["yesterday's news", "still fresh"].every((text) => items.some((m) => m.text === text)))
      const idOf = (text: string) => items.find((m) => m.text === text).id as string
      // The Store is the only clock a status has: its row is aged as a day passing would age it.
      const age = (id: string, hours: number) =>
        Effect.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE messages SET timestamp = ${new Date(Date.now() - hours * 3_600_000).toISOString()} WHERE id = ${id}`).pipe(
            Effect.provide(SqliteClient.layer({ filename: path.join(gateway().settings.dataDir, "switchboard.db") }))
          )
        )
      await age(idOf("yesterday's news"), 25)
      await age(idOf("still fresh"), 23)
      const texts = (await feed(bob.id)).map((m) => m.text)
      expect(texts).toContain("still fresh")
      expect(texts).not.toContain("yesterday's news")
      expect((await call("GET", bob.id, `/messages/${idOf("yesterday's news")}`)).body.text).toBe("yesterday's news")
    })

    it("refuses a status with nobody to see it, a bad colour, and media of the wrong body type", async () => {
      const fresh = await readySession(gateway(), "sc-lonely")
      const nobody = await call("POST", fresh.id, "/status/text", { text: "anyone?" })
      expect(nobody.status).toBe(409)
      expect(nobody.body.code).toBe("NO_STATUS_AUDIENCE")
      const colour = await call("POST", alice.id, "/status/text", { text: "x", backgroundColor: "blue", contacts: [bob.phone] })
      expect(colour.status).toBe(400)
      expect(colour.body.code).toBe("VALIDATION_FAILED")
      const plain = await gateway().call("POST", `/api/sessions/${alice.id}/status/image`, { raw: "hello", headers: { "content-type": "text/plain" } })
      expect(plain.status).toBe(415)
    })

    it("leaves contacts the account blocked out of the audience, named or not; 409 NO_STATUS_AUDIENCE when nobody remains", async () => {
      const dora = await readySession(gateway(), "sc-dora")
      await call("POST", carol.id, "/messages/send-text", { chatId: dora.phone, text: "hi dora" })
      await eventually(() => call("GET", dora.id, "/contacts"), (r) => r.body.data.some((c: any) => c.id === `${carol.phone}@c.us`))
      expect((await call("POST", dora.id, `/contacts/${carol.phone}/block`)).status).toBe(200)
      for (const contacts of [undefined, [carol.phone]]) {
        const refused = await call("POST", dora.id, "/status/text", { text: "not for carol", ...(contacts === undefined ? {} : { contacts }) })
        expect(refused.status).toBe(409)
        expect(refused.body.code).toBe("NO_STATUS_AUDIENCE")
      }
      const posted = await call("POST", dora.id, "/status/text", { text: "bob only", contacts: [carol.phone, bob.phone] })
      expect(posted.status).toBe(201)
      await eventually(() => feed(bob.id), (items) => items.some((m) => m.text === "bob only"))
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect((await feed(carol.id)).some((m) => m.text === "bob only")).toBe(false)
    })

    it("deletes an own status for everyone; a contact's is 403 NOT_OWN_STATUS, an unknown one 404 STATUS_NOT_FOUND", async () => {
      const posted = await call("POST", alice.id, "/status/text", { text: "gone soon", contacts: [bob.phone] })
      const bobsCopy = await eventually(() => feed(bob.id), (items) => items.some((m) => m.text === "gone soon"))
        .then((items) => items.find((m) => m.text === "gone soon"))
      await eventually(() => call("GET", alice.id, `/messages/${posted.body.messageId}`), (r) => r.body.status !== "pending")
      const notOwn = await call("DELETE", bob.id, `/status/${bobsCopy.id}`)
      expect(notOwn.status).toBe(403)
      expect(notOwn.body.code).toBe("NOT_OWN_STATUS")
      expect((await call("DELETE", alice.id, "/status/no-such-status")).body.code).toBe("STATUS_NOT_FOUND")
      const removed = await call("DELETE", alice.id, `/status/${posted.body.messageId}`)
      expect(removed.status).toBe(204)
      await eventually(() => call("GET", bob.id, `/messages/${bobsCopy.id}`), (r) => r.body.revoked === true)
    })

    it("an echo contact written '#status <text>' posts that text as its status update", async () => {
      const echo = "15550001234"
      await call("POST", bob.id, "/messages/send-text", { chatId: echo, text: "#status gone fishing" })
      const items = await eventually(() => feed(bob.id), (items) => items.some((m) => m.text === "gone fishing"))
      expect(items.find((m) => m.text === "gone fishing")).toMatchObject({ from: `${echo}@c.us`, fromMe: false })
    })
  })

  describe("calls", () => {
    const ring = (sessionId: string, body: unknown, key?: string) =>
      gateway().call("POST", `/api/sandbox/sessions/${sessionId}/incoming-call`, { body, ...(key === undefined ? {} : { key }) })

    it("an incoming call is logged and announced; rejecting it through the API announces call.update", async () => {
      const rung = await ring(bob.id, { from: "+4915112345678", isVideo: true })
      expect(rung.status).toBe(201)
      expect(rung.body).toMatchObject({ from: "4915112345678@c.us", isVideo: true, status: "offer" })
      const { callId } = rung.body
      const announced = await delivered("call.received", (d) => d.call.callId === callId)
      expect(announced[0]!.data.call).toMatchObject({ from: "4915112345678@c.us", isVideo: true, isGroup: false, status: "offer" })
      expect((await eventually(() => callLog(bob.id), (log) => log.some((c) => c.callId === callId)))[0]).toMatchObject({ callId, status: "offer" })
      const rejected = await call("POST", bob.id, `/calls/${callId}/reject`)
      expect(rejected.status).toBe(200)
      expect(rejected.body).toMatchObject({ callId, status: "reject" })
      await delivered("call.update", (d) => d.callId === callId && d.status === "reject")
      expect((await callLog(bob.id)).find((c) => c.callId === callId).status).toBe("reject")
      const again = await call("POST", bob.id, `/calls/${callId}/reject`)
      expect(again.status).toBe(409)
      expect(again.body.code).toBe("CALL_NOT_RINGING")
      const unknown = await call("POST", bob.id, "/calls/NOSUCHCALL/reject")
      expect(unknown.status).toBe(404)
      expect(unknown.body.code).toBe("CALL_NOT_FOUND")
    })

    it("with rejectCalls and a message, a call from another session is rejected at once and the caller gets the text", async () => {
      await call("PUT", carol.id, "/settings", { rejectCalls: true, rejectCallMessage: "I cannot take calls; please write." })
      const rung = await ring(carol.id, { from: "sc-alice" })
      expect(rung.status).toBe(201)
      expect(rung.body.from).toBe(`${alice.phone}@c.us`)
      const { callId } = rung.body
      await eventually(() => callLog(carol.id), (log) => log.some((c) => c.callId === callId && c.status === "reject"))
      await delivered("call.update", (d) => d.callId === callId && d.status === "reject")
      const inbox = await eventually(
        () => call("GET", alice.id, `/messages?direction=in&chatId=${carol.phone}@c.us`),
        (r) => r.body.data.some((m: any) => m.text === "I cannot take calls; please write.")
      )
      expect(inbox.body.data[0]).toMatchObject({ from: `${carol.phone}@c.us`, type: "text" })
      // alice placed the call: her call log (of calls to her) does not have it
      expect((await callLog(alice.id)).some((c) => c.callId === callId)).toBe(false)
    })

    it("a session that blocked the caller is not rung, and the caller gets no rejectCallMessage", async () => {
      // carol still rejects calls with a message (the test before)
      expect((await call("POST", carol.id, `/contacts/${alice.phone}/block`)).status).toBe(200)
      const rung = await ring(carol.id, { from: "sc-alice" })
      expect(rung.status).toBe(201)
      const { callId } = rung.body
      const later = (await ring(carol.id, { from: "4915100000004" })).body.callId
      await eventually(() => callLog(carol.id), (log) => log.some((c) => c.callId === later))
      expect((await callLog(carol.id)).some((c) => c.callId === callId)).toBe(false)
      expect(receiver.deliveries.some((d) => d.event.startsWith("call.") && JSON.stringify(d.data).includes(callId))).toBe(false)
      const answers = await call("GET", alice.id, `/messages?direction=in&chatId=${carol.phone}@c.us`)
      expect(answers.body.data.filter((m: any) => m.text === "I cannot take calls; please write.")).toHaveLength(1)
      await call("POST", carol.id, `/contacts/${alice.phone}/unblock`)
    })

    it("pages the call log newest first", async () => {
      const first = (await ring(bob.id, { from: "4915100000001" })).body.callId
      const second = (await ring(bob.id, { from: "4915100000002" })).body.callId
      await eventually(() => callLog(bob.id), (log) => log.some((c) => c.callId === second))
      const page = await call("GET", bob.id, "/calls?page=1&limit=1")
      expect(page.body.data.items.map((c: any) => c.callId)).toEqual([second])
      expect(page.body.data.pagination.total).toBeGreaterThanOrEqual(3)
      const next = await call("GET", bob.id, "/calls?page=2&limit=1")
      expect(next.body.data.items.map((c: any) => c.callId)).toEqual([first])
    })

    it("the incoming-call endpoint is for admin keys, and names what it cannot ring", async () => {
      const operator = await newKey("operator")
      const refused = await ring(bob.id, { from: "4915100000003" }, operator)
      expect(refused.status).toBe(403)
      expect(refused.body.code).toBe("FORBIDDEN")
      expect((await ring("nobody", { from: "4915100000003" })).body.code).toBe("SESSION_NOT_FOUND")
      const badCaller = await ring(bob.id, { from: "not a number" })
      expect(badCaller.status).toBe(400)
      expect((await ring(bob.id, { from: "" })).status).toBe(400)
      for (const from of ["120363012345678901@g.us", "120363012345678901@newsletter", bob.phone, `${bob.phone}@c.us`, "sc-bob", bob.id]) {
        const refusedCaller = await ring(bob.id, { from })
        expect({ from, status: refusedCaller.status, code: refusedCaller.body.code }).toEqual({ from, status: 400, code: "VALIDATION_FAILED" })
      }
    })
  })
})

describe("the incoming-call endpoint on another engine", () => {
  it("is 404 NOT_SANDBOX: only the sandbox simulates calls", async () => {
    const scope = await Effect.runPromise(Scope.make())
    try {
      // Baileys pointed at a port nobody listens on: no session connects, none needs to.
      const gateway = await Effect.runPromise(Scope.extend(startGatewayWith(BaileysEngineLive({ waWebSocketUrl: "ws://127.0.0.1:9" })), scope))
      const created = await gateway.call("POST", "/api/sessions", { body: { name: "not-sandbox" } })
      const rung = await gateway.call("POST", `/api/sandbox/sessions/${created.body.id}/incoming-call`, { body: { from: "4915100000001" } })
      expect(rung.status).toBe(404)
      expect(rung.body.code).toBe("NOT_SANDBOX")
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
