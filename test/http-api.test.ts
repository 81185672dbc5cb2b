import { Duration, Effect, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { eventually, readySession, startGateway, tempDir, TEST_KEY, type TestGateway, useGateway } from "./support/gateway.js"

const errorShape = (status: number, code: string) => ({
  statusCode: status,
  error: expect.any(String),
  code,
  message: expect.any(String)
})

describe("authentication", () => {
  const gateway = useGateway()

  const protectedRoutes: ReadonlyArray<[string, string]> = [
    ["GET", "/api/sessions"],
    ["POST", "/api/sessions"],
    ["GET", "/api/sessions/x"],
    ["DELETE", "/api/sessions/x"],
    ["POST", "/api/sessions/x/start"],
    ["POST", "/api/sessions/x/stop"],
    ["POST", "/api/sessions/x/restart"],
    ["POST", "/api/sessions/x/logout"],
    ["GET", "/api/sessions/x/qr"],
    ["POST", "/api/sessions/x/pairing-code"],
    ["GET", "/api/sessions/x/me"],
    ["GET", "/api/sessions/x/proxy"],
    ["PUT", "/api/sessions/x/proxy"],
    ["POST", "/api/sessions/x/messages/send-text"],
    ["POST", "/api/sessions/x/messages/read"],
    ["POST", "/api/sessions/x/messages/send-bulk"],
    ["GET", "/api/sessions/x/messages/batch/y"],
    ["POST", "/api/sessions/x/messages/batch/y/cancel"],
    ["GET", "/api/sessions/x/messages"],
    ["GET", "/api/sessions/x/messages/y"]
  ]

  it.each(protectedRoutes)("%s %s without a key is 401 UNAUTHORIZED", async (method, route) => {
    const response = await gateway().call(method, route, { key: null, body: {} })
    expect(response.status).toBe(401)
    expect(response.body).toEqual(errorShape(401, "UNAUTHORIZED"))
  })

  it("refuses a wrong key, accepts the right one as X-API-Key or as a Bearer token", async () => {
    expect((await gateway().call("GET", "/api/sessions", { key: "sb_wrong" })).status).toBe(401)
    expect((await gateway().call("GET", "/api/sessions")).status).toBe(200)
    const bearer = await gateway().call("GET", "/api/sessions", { key: null, headers: { authorization: `Bearer ${TEST_KEY}` } })
    expect(bearer.status).toBe(200)
  })

  it("serves health, OpenAPI and Swagger UI without a key", async () => {
    const health = await gateway().call("GET", "/api/health", { key: null })
    expect(health.status).toBe(200)
    expect(health.body).toMatchObject({ status: "ok", version: "0.1.0", checks: { database: "ok" } })
    expect((await gateway().call("GET", "/api/health/live", { key: null })).body).toEqual({ status: "ok" })
    expect((await gateway().call("GET", "/api/health/ready", { key: null })).body).toEqual({ status: "ready" })
    const openapi = await gateway().call("GET", "/api/openapi.json", { key: null })
    expect(openapi.status).toBe(200)
    expect(openapi.body.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", name: "X-API-Key", in: "header" })
    // Swagger's "Authorize" applies the key to exactly the operations that declare it.
    expect(openapi.body.paths["/api/sessions/{sessionId}/messages/send-text"].post.security).toContainEqual({ apiKey: [] })
    expect(openapi.body.paths["/api/health"].get.security).toEqual([])
    // The message and account surface declares every status it can answer: a store outage (503),
    // a body over BODY_MAX_BYTES (413) and the rate limit (429) included.
    const surface: Array<[string, string]> = [
      ["/api/sessions/{sessionId}/messages/send-location", "post"],
      ["/api/sessions/{sessionId}/messages/send-contact", "post"],
      ["/api/sessions/{sessionId}/messages/send-poll", "post"],
      ["/api/sessions/{sessionId}/messages/send-sticker", "post"],
      ["/api/sessions/{sessionId}/messages/poll-vote", "post"],
      ["/api/sessions/{sessionId}/messages/{messageId}/poll", "get"],
      ["/api/sessions/{sessionId}/messages/{messageId}/forward", "post"],
      ["/api/sessions/{sessionId}/messages/{messageId}", "put"],
      ["/api/sessions/{sessionId}/messages/{messageId}", "delete"],
      ["/api/sessions/{sessionId}/messages/{messageId}/star", "post"],
      ["/api/sessions/{sessionId}/messages/{messageId}/pin", "post"],
      ["/api/sessions/{sessionId}/presence", "post"],
      ["/api/sessions/{sessionId}/presence/subscribe", "post"],
      ["/api/sessions/{sessionId}/presence/{chatId}", "get"],
      // Issue 18: chats, profile, contacts, group admin, settings, status updates, calls.
      ["/api/sessions/{sessionId}/chats", "get"],
      ["/api/sessions/{sessionId}/chats/{chatId}", "get"],
      ["/api/sessions/{sessionId}/chats/{chatId}", "delete"],
      ["/api/sessions/{sessionId}/chats/{chatId}/archive", "post"],
      ["/api/sessions/{sessionId}/chats/{chatId}/pin", "post"],
      ["/api/sessions/{sessionId}/chats/{chatId}/mute", "post"],
      ["/api/sessions/{sessionId}/chats/{chatId}/unread", "post"],
      ["/api/sessions/{sessionId}/chats/{chatId}/messages", "get"],
      ["/api/sessions/{sessionId}/chats/{chatId}/history", "post"],
      ["/api/sessions/{sessionId}/profile", "get"],
      ["/api/sessions/{sessionId}/profile/name", "put"],
      ["/api/sessions/{sessionId}/profile/about", "put"],
      ["/api/sessions/{sessionId}/profile/picture", "put"],
      ["/api/sessions/{sessionId}/profile/picture", "delete"],
      ["/api/sessions/{sessionId}/contacts/blocklist", "get"],
      ["/api/sessions/{sessionId}/contacts/lid/{lid}", "get"],
      ["/api/sessions/{sessionId}/contacts/{chatId}/lid", "get"],
      ["/api/sessions/{sessionId}/contacts/{chatId}", "get"],
      ["/api/sessions/{sessionId}/contacts/{chatId}/picture", "get"],
      ["/api/sessions/{sessionId}/contacts/{chatId}/block", "post"],
      ["/api/sessions/{sessionId}/contacts/{chatId}/unblock", "post"],
      ["/api/sessions/{sessionId}/groups/{groupId}/settings", "put"],
      ["/api/sessions/{sessionId}/groups/{groupId}/picture", "put"],
      ["/api/sessions/{sessionId}/groups/{groupId}/picture", "delete"],
      ["/api/sessions/{sessionId}/groups/{groupId}/requests", "get"],
      ["/api/sessions/{sessionId}/groups/{groupId}/requests/approve", "post"],
      ["/api/sessions/{sessionId}/groups/{groupId}/requests/reject", "post"],
      ["/api/sessions/{sessionId}/settings", "get"],
      ["/api/sessions/{sessionId}/settings", "put"],
      ["/api/sessions/{sessionId}/status", "get"],
      ["/api/sessions/{sessionId}/status/{messageId}", "delete"],
      ["/api/sessions/{sessionId}/status/text", "post"],
      ["/api/sessions/{sessionId}/status/image", "post"],
      ["/api/sessions/{sessionId}/status/video", "post"],
      ["/api/sessions/{sessionId}/calls", "get"],
      ["/api/sessions/{sessionId}/calls/{callId}/reject", "post"],
      ["/api/sandbox/sessions/{sessionId}/incoming-call", "post"]
    ]
    for (const [path, method] of surface) {
      const statuses = Object.keys(openapi.body.paths[path]?.[method]?.responses ?? {})
      // 413 where a body is read: a GET has none (test/openapi-contract.test.ts checks the rest)
      const bodyCap = method === "get" ? [] : ["413"]
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["400", "404", "409", "429", "503", ...bodyCap]))
      if (method === "get") expect(statuses, `${method} ${path}`).not.toContain("413")
    }
    // Every send declares 429 SESSION_BACKLOG_FULL with its Retry-After (issue 19), and the session its backlog.
    const sends: Array<string> = [
      "messages/send-text",
      "messages/send-image",
      "messages/send-video",
      "messages/send-audio",
      "messages/send-document",
      "messages/send-sticker",
      "messages/send-location",
      "messages/send-contact",
      "messages/send-poll",
      "messages/send-bulk",
      "messages/{messageId}/forward",
      "status/text",
      "status/image",
      "status/video"
    ]
    for (const send of sends) {
      const tooMany = openapi.body.paths[`/api/sessions/{sessionId}/${send}`]?.post?.responses?.["429"]
      expect(tooMany?.description, send).toContain("SESSION_BACKLOG_FULL")
      expect(tooMany?.headers?.["Retry-After"]?.schema, send).toEqual({ type: "integer", minimum: 1 })
    }
    expect(openapi.body.components.schemas.Session.properties.outbound).toEqual({ $ref: "#/components/schemas/OutboundBacklog" })
    expect(openapi.body.components.schemas.OutboundBacklog.required).toEqual(["backlog", "max"])
    const docs = await gateway().call("GET", "/api/docs", { key: null })
    expect(docs.status).toBe(200)
    // Offline: the UI is inlined, nothing is fetched from a CDN.
    expect(docs.body).toContain("SwaggerUIBundle")
    expect(docs.body).not.toMatch(/<script[^>]+src="https?:/)
  })
})

describe("bad input is a 4xx with the error shape, never a 500", () => {
  const gateway = useGateway()

  it("answers malformed JSON, missing and mistyped fields with 400 VALIDATION_FAILED and details", async () => {
    const malformed = await gateway().call("POST", "/api/sessions", { raw: "{\"name\":" })
    expect(malformed.status).toBe(400)
    expect(malformed.body).toEqual(errorShape(400, "VALIDATION_FAILED"))

    const missing = await gateway().call("POST", "/api/sessions", { body: { nam: "x" } })
    expect(missing.status).toBe(400)
    expect(missing.body.code).toBe("VALIDATION_FAILED")
    expect(missing.body.details).toContainEqual({ path: "name", message: "is missing" })
    expect(missing.body.message).toContain("name")

    for (
      const body of [
        { name: 42 },
        { name: "" },
        { name: "x".repeat(65) },
        { name: "bad/name" },
        { name: "p", proxy: { url: "ftp://proxy:1" } },
        { name: "p", autoStart: "yes" },
        [],
        "text"
      ]
    ) {
      const response = await gateway().call("POST", "/api/sessions", { body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(response.body.code).toBe("VALIDATION_FAILED")
    }
  })

  it("answers unknown routes and records with 404 and a precise code", async () => {
    expect((await gateway().call("GET", "/api/nothing-here")).body).toEqual(errorShape(404, "ROUTE_NOT_FOUND"))
    expect((await gateway().call("GET", "/api/sessions/nope")).body).toEqual(errorShape(404, "SESSION_NOT_FOUND"))
    expect((await gateway().call("POST", "/api/sessions/nope/start")).body).toEqual(errorShape(404, "SESSION_NOT_FOUND"))
    const { id } = await readySession(gateway(), "finder")
    expect((await gateway().call("GET", `/api/sessions/${id}/messages/nope`)).body).toEqual(errorShape(404, "MESSAGE_NOT_FOUND"))
  })

  it("validates send-text input and list filters", async () => {
    const { id } = await readySession(gateway(), "validator")
    for (
      const body of [
        { chatId: "not-a-number", text: "hi" },
        { chatId: "123@example.com", text: "hi" },
        { chatId: "15551234567@c.us", text: "" },
        { chatId: "15551234567@c.us" },
        { text: "hi" },
        { chatId: "15551234567@c.us", text: 5 }
      ]
    ) {
      const response = await gateway().call("POST", `/api/sessions/${id}/messages/send-text`, { body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(response.body.code).toBe("VALIDATION_FAILED")
    }
    for (const query of ["page=abc", "limit=1.5", "status=bogus", "direction=sideways", "since=yesterday"]) {
      const response = await gateway().call("GET", `/api/sessions/${id}/messages?${query}`)
      expect(response.status, query).toBe(400)
      expect(response.body.code).toBe("VALIDATION_FAILED")
    }
  })

  it("survives a barrage of hostile requests without a single 5xx", async () => {
    const { id } = await readySession(gateway(), "barrage")
    const attempts: Array<[string, string, { raw?: string; body?: unknown; headers?: Record<string, string> }]> = [
      ["POST", "/api/sessions", { raw: "\u0000\u0001" }],
      ["POST", "/api/sessions", { raw: "null" }],
      ["POST", "/api/sessions", { raw: "{\"name\":\"a\"}", headers: { "content-type": "text/plain" } }],
      ["POST", `/api/sessions/${id}/messages/send-text`, { raw: "[" }],
      ["POST", `/api/sessions/${id}/messages/send-text`, { body: { chatId: "1".repeat(500) + "@c.us", text: "x" } }],
      ["POST", `/api/sessions/${id}/messages/read`, { body: { chatId: 1 } }],
      ["POST", `/api/sessions/${id}/pairing-code`, { body: { phoneNumber: "abc" } }],
      ["GET", `/api/sessions/${encodeURIComponent("../../etc/passwd")}`, {}],
      ["GET", `/api/sessions?limit=${"9".repeat(400)}`, {}],
      ["GET", `/api/sessions/${id}/qr?format=gif`, {}]
    ]
    for (const [method, route, options] of attempts) {
      const response = await gateway().call(method, route, options)
      expect(response.status, `${method} ${route}`).toBeGreaterThanOrEqual(400)
      expect(response.status, `${method} ${route}`).toBeLessThan(500)
      expect(response.body).toMatchObject({ statusCode: response.status, code: expect.any(String) })
    }
  })
})

describe("session lifecycle over HTTP", () => {
  const gateway = useGateway()

  it("creates, links by QR, reports me, stops, restarts, logs out and deletes", async () => {
    const created = await gateway().call("POST", "/api/sessions", {
      body: { name: "lifecycle", proxy: { url: "socks5://user:s3cret@proxy.example:1080" } }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ name: "lifecycle", status: "created", engine: "sandbox", phone: null, lastError: null })
    // The proxy password is never echoed back.
    expect(created.body.proxy.url).toBe("socks5://user:***@proxy.example:1080")
    expect(JSON.stringify(created.body)).not.toContain("s3cret")
    const id = created.body.id as string
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)

    const duplicate = await gateway().call("POST", "/api/sessions", { body: { name: "lifecycle" } })
    expect(duplicate.status).toBe(409)
    expect(duplicate.body.code).toBe("SESSION_NAME_TAKEN")

    expect((await gateway().call("GET", `/api/sessions/${id}/qr`)).status).toBe(409)
    expect((await gateway().call("GET", `/api/sessions/${id}/me`)).body.code).toBe("SESSION_NOT_READY")

    const started = await gateway().call("POST", `/api/sessions/${id}/start`)
    expect(started.status).toBe(200)
    expect(["initializing", "qr_ready", "authenticating", "ready"]).toContain(started.body.status)
    const ready = await eventually(() => gateway().call("GET", `/api/sessions/${id}`), (r) => r.body.status === "ready")
    expect(ready.body.phone).toMatch(/^999\d{9}$/)

    const me = await gateway().call("GET", `/api/sessions/${id}/me`)
    expect(me.body).toEqual({ id: `${ready.body.phone}@c.us`, phone: ready.body.phone, lid: expect.stringMatching(/@lid$/), pushName: expect.any(String) })

    const stopped = await gateway().call("POST", `/api/sessions/${id}/stop`)
    expect(stopped.body.status).toBe("stopped")
    const refused = await gateway().call("POST", `/api/sessions/${id}/messages/send-text`, { body: { chatId: "15550001111", text: "hi" } })
    expect(refused.status).toBe(409)
    expect(refused.body.code).toBe("SESSION_NOT_READY")
    // Stop is idempotent.
    expect((await gateway().call("POST", `/api/sessions/${id}/stop`)).body.status).toBe("stopped")

    // Linked state survives a stop: the restart goes straight to ready, no QR.
    await gateway().call("POST", `/api/sessions/${id}/restart`)
    await eventually(() => gateway().call("GET", `/api/sessions/${id}`), (r) => r.body.status === "ready")

    const loggedOut = await gateway().call("POST", `/api/sessions/${id}/logout`)
    expect(loggedOut.body).toMatchObject({ status: "logged_out", phone: null })
    expect((await gateway().call("GET", `/api/sessions/${id}/me`)).status).toBe(409)

    // After a logout a start needs a new link (a QR, shown until paired).
    await gateway().call("POST", `/api/sessions/${id}/start`)
    await eventually(() => gateway().call("GET", `/api/sessions/${id}`), (r) => r.body.status === "ready")

    const deleted = await gateway().call("DELETE", `/api/sessions/${id}`)
    expect(deleted.status).toBe(204)
    expect((await gateway().call("GET", `/api/sessions/${id}`)).status).toBe(404)
  })
})

describe("per-session proxy over HTTP", () => {
  const gateway = useGateway()

  it("sets, shows (password redacted), validates and clears a session's proxy", async () => {
    const { id } = await readySession(gateway(), "proxied")
    expect((await gateway().call("GET", `/api/sessions/${id}/proxy`)).body).toBeNull()
    const set = await gateway().call("PUT", `/api/sessions/${id}/proxy`, { body: { url: "http://ops:pa55word@127.0.0.1:3128" } })
    expect(set.status).toBe(200)
    expect(set.body).toEqual({ url: "http://ops:***@127.0.0.1:3128" })
    const shown = await gateway().call("GET", `/api/sessions/${id}/proxy`)
    expect(shown.body).toEqual({ url: "http://ops:***@127.0.0.1:3128" })
    expect(JSON.stringify((await gateway().call("GET", `/api/sessions/${id}`)).body)).not.toContain("pa55word")
    for (const url of ["ftp://x:1", "not a url", "socks4://x:1", 5]) {
      const refused = await gateway().call("PUT", `/api/sessions/${id}/proxy`, { body: { url } })
      expect(refused.status, String(url)).toBe(400)
      expect(refused.body.code).toBe("VALIDATION_FAILED")
    }
    // A refused URL is not repeated back: it may carry a password.
    const withSecret = await gateway().call("PUT", `/api/sessions/${id}/proxy`, { body: { url: "ftp://u:topsecret@127.0.0.1:21" } })
    expect(withSecret.status).toBe(400)
    expect(JSON.stringify(withSecret.body)).not.toContain("topsecret")
    expect(withSecret.body.message).toContain("proxy url must be")
    const atCreate = await gateway().call("POST", "/api/sessions", { body: { name: "leaky", proxy: { url: "socks4://u:topsecret@127.0.0.1:1080" } } })
    expect(atCreate.status).toBe(400)
    expect(JSON.stringify(atCreate.body)).not.toContain("topsecret")
    expect((await gateway().call("PUT", `/api/sessions/${id}/proxy`, { body: { url: null } })).body).toBeNull()
    expect((await gateway().call("GET", `/api/sessions/${id}/proxy`)).body).toBeNull()
    expect((await gateway().call("GET", "/api/sessions/nope/proxy")).body.code).toBe("SESSION_NOT_FOUND")
  })
})

describe("linking with QR and pairing code (automatic pairing off)", () => {
  const gateway = useGateway({ sandboxPairDelay: Duration.zero })

  it("shows the QR as JSON and PNG until a pairing code links the session", async () => {
    const created = await gateway().call("POST", "/api/sessions", { body: { name: "pairing", autoStart: true } })
    const id = created.body.id as string
    const qr = await eventually(() => gateway().call("GET", `/api/sessions/${id}/qr`), (r) => r.status === 200)
    expect(qr.body).toEqual({
      qr: expect.stringMatching(/^sandbox:/),
      image: expect.stringMatching(/^data:image\/png;base64,/),
      expiresAt: expect.any(String)
    })
    expect(Date.parse(qr.body.expiresAt)).toBeGreaterThan(Date.now())
    const png = await gateway().call("GET", `/api/sessions/${id}/qr?format=png`)
    expect(png.status).toBe(200)
    expect(png.headers.get("content-type")).toBe("image/png")
    expect(Array.from((png.body as Uint8Array).slice(0, 4))).toEqual([0x89, 0x50, 0x4e, 0x47])
    expect((await gateway().call("GET", `/api/sessions/${id}`)).body.status).toBe("qr_ready")

    const code = await gateway().call("POST", `/api/sessions/${id}/pairing-code`, { body: { phoneNumber: "+15551230000" } })
    expect(code.status, JSON.stringify(code.body)).toBe(200)
    expect(code.body.code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/)
    await eventually(() => gateway().call("GET", `/api/sessions/${id}`), (r) => r.body.status === "ready")
    const late = await gateway().call("POST", `/api/sessions/${id}/pairing-code`, { body: { phoneNumber: "+15551230000" } })
    expect(late.status).toBe(409)
    expect((await gateway().call("GET", `/api/sessions/${id}/qr`)).body.code).toBe("SESSION_NOT_READY")
  })
})

describe("two sessions message each other end to end", () => {
  const gateway = useGateway()

  it("moves the sender's message pending → sent → delivered → read and shows it to the recipient", async () => {
    const alice = await readySession(gateway(), "alice")
    const bob = await readySession(gateway(), "bob")

    const sent = await gateway().call("POST", `/api/sessions/${alice.id}/messages/send-text`, {
      body: { chatId: `+${bob.phone}`, text: "hello bob" }
    })
    expect(sent.status).toBe(201)
    expect(sent.body).toMatchObject({ chatId: `${bob.phone}@c.us`, status: "pending" })
    const messageId = sent.body.messageId as string

    const delivered = await eventually(
      () => gateway().call("GET", `/api/sessions/${alice.id}/messages/${messageId}`),
      (r) => r.body.status === "delivered"
    )
    expect(delivered.body).toMatchObject({ fromMe: true, from: `${alice.phone}@c.us`, to: `${bob.phone}@c.us`, text: "hello bob", ack: 2 })

    const inbox = await eventually(
      () => gateway().call("GET", `/api/sessions/${bob.id}/messages?direction=in`),
      (r) => r.body.data.length === 1
    )
    expect(inbox.body.data[0]).toMatchObject({ fromMe: false, chatId: `${alice.phone}@c.us`, from: `${alice.phone}@c.us`, text: "hello bob" })

    const read = await gateway().call("POST", `/api/sessions/${bob.id}/messages/read`, { body: { chatId: `${alice.phone}@c.us` } })
    expect(read.body).toEqual({ chatId: `${alice.phone}@c.us`, read: 1 })
    const final = await eventually(
      () => gateway().call("GET", `/api/sessions/${alice.id}/messages/${messageId}`),
      (r) => r.body.status === "read"
    )
    expect(final.body.ack).toBe(3)
    expect(final.body.statusHistory.map((change: { status: string }) => change.status)).toEqual(["pending", "sent", "delivered", "read"])
  })

  it("holds a message for a stopped recipient and delivers it when it is back", async () => {
    const carol = await readySession(gateway(), "carol")
    const dave = await readySession(gateway(), "dave")
    await gateway().call("POST", `/api/sessions/${dave.id}/stop`)

    const sent = await gateway().call("POST", `/api/sessions/${carol.id}/messages/send-text`, { body: { chatId: dave.phone, text: "while you were out" } })
    await eventually(() => gateway().call("GET", `/api/sessions/${carol.id}/messages/${sent.body.messageId}`), (r) => r.body.status === "sent")
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await gateway().call("GET", `/api/sessions/${carol.id}/messages/${sent.body.messageId}`)).body.status).toBe("sent")

    await gateway().call("POST", `/api/sessions/${dave.id}/start`)
    await eventually(() => gateway().call("GET", `/api/sessions/${carol.id}/messages/${sent.body.messageId}`), (r) => r.body.status === "delivered")
    const inbox = await gateway().call("GET", `/api/sessions/${dave.id}/messages?direction=in`)
    expect(inbox.body.data.map((m: { text: string }) => m.text)).toEqual(["while you were out"])
  })

  it("gets an answer from an echo contact", async () => {
    const erin = await readySession(gateway(), "erin")
    await gateway().call("POST", `/api/sessions/${erin.id}/messages/send-text`, { body: { chatId: "15550009999@c.us", text: "ping" } })
    const chat = await eventually(
      () => gateway().call("GET", `/api/sessions/${erin.id}/messages?chatId=15550009999@c.us`),
      (r) => r.body.data.length === 2 && r.body.data.some((m: { fromMe: boolean; status: string }) => m.fromMe && m.status === "read")
    )
    // Newest first: the echo, then what we sent.
    expect(chat.body.data.map((m: { fromMe: boolean; text: string }) => [m.fromMe, m.text])).toEqual([[false, "ping"], [true, "ping"]])
  })
})

describe("rotating API_KEY", () => {
  it("revokes the previous environment key when the gateway starts with a new one", async () => {
    const dataDir = tempDir()
    const withKey = (key: string) => ({ dataDir, databaseUrl: `sqlite:${dataDir}/sb.db`, apiKey: Option.some(Redacted.make(key)) })
    const run = <A>(key: string, use: (gateway: TestGateway) => Promise<A>) =>
      Effect.runPromise(Effect.scoped(Effect.flatMap(startGateway(withKey(key)), (gateway) => Effect.promise(() => use(gateway)))))

    await run("sb_old_key_000000000000000000000000", async (gateway) => {
      expect((await gateway.call("GET", "/api/sessions", { key: "sb_old_key_000000000000000000000000" })).status).toBe(200)
    })
    await run("sb_new_key_111111111111111111111111", async (gateway) => {
      expect((await gateway.call("GET", "/api/sessions", { key: "sb_new_key_111111111111111111111111" })).status).toBe(200)
      const old = await gateway.call("GET", "/api/sessions", { key: "sb_old_key_000000000000000000000000" })
      expect(old.status).toBe(401)
      expect(old.body.message).toContain("revoked")
    })
  })
})
