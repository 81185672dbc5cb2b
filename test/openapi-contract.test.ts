import { Duration, Effect } from "effect"
import sharp from "sharp"
import { get } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, TEST_KEY, tempDir, type TestGateway, useGateway } from "./support/gateway.js"
import { base64, mp4, opus, pdf, png } from "./support/mediaSamples.js"
import { type Answer, makeConformance, operationsOf } from "./support/openApiConformance.js"
import { useGatewayProcesses } from "./support/process.js"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.js"

/**
 * The document at /api/openapi.json is what generated clients trust. Here every operation it
 * declares is called on a real gateway (sandbox engine, SQLite file, HTTP over loopback), with
 * requests that succeed and requests that fail as callers' do, and every answer is checked by a
 * third-party validator (ajv) against what the document declares for it: status, content type,
 * body, headers. The last test fails on any mismatch, and on any operation left uncalled.
 */
describe("the OpenAPI document", { timeout: 60_000 }, () => {
  const gateway = useGateway({
    // automatic pairing off: a started session shows its QR until a pairing code links it
    sandboxPairDelay: Duration.zero,
    webhooks: {
      timeout: Duration.seconds(2),
      allowPrivate: true,
      concurrency: 2,
      perWebhookConcurrency: 1,
      perWebhookConcurrencyMax: 1,
      eventRetention: Duration.hours(1)
    }
  })

  /**
   * The served document, read on a connection of its own: building the validator takes seconds,
   * and a kept-alive socket idle that long may be closed by the server as fetch reuses it.
   */
  const fetchDocument = () =>
    new Promise<Record<string, any>>((resolve, reject) => {
      get(`${gateway().baseUrl}/api/openapi.json`, { agent: false }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
      }).on("error", reject)
    })

  let conformance: ReturnType<typeof makeConformance>
  let receiver: WebhookReceiver
  beforeAll(async () => {
    conformance = makeConformance(await fetchDocument())
    receiver = await startWebhookReceiver()
  })
  afterAll(() => receiver?.close())

  /** A request; its answer is checked against the document and returned. */
  const call = async (
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; form?: FormData; key?: string | null; headers?: Record<string, string> } = {}
  ): Promise<Answer> => {
    const { baseUrl } = gateway()
    const headers: Record<string, string> = { ...options.headers }
    const key = options.key === undefined ? TEST_KEY : options.key
    if (key !== null) headers["x-api-key"] = key
    const body = options.form ?? options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
    if (typeof body === "string") headers["content-type"] ??= "application/json"
    const abort = new AbortController()
    const response = await fetch(`${baseUrl}${path}`, { method, headers, signal: abort.signal, ...(body === undefined ? {} : { body }) }).catch((error) => {
      throw new Error(`${method} ${path}: ${error}`, { cause: error })
    })
    const type = response.headers.get("content-type") ?? ""
    let parsed: unknown
    // the event stream never ends: its status and headers are what there is to check
    if (type.startsWith("text/event-stream")) abort.abort()
    else if (type.includes("json")) parsed = await response.json()
    else parsed = new Uint8Array(await response.arrayBuffer())
    const answer = { status: response.status, headers: response.headers, body: parsed }
    conformance.check(method, new URL(path, baseUrl).pathname, answer)
    return answer
  }

  /** The answer to a request, which must have `status` (the failure shows what came instead). */
  const answers = async (request: Promise<Answer>, status: number): Promise<Answer & { body: any }> => {
    const answer = await request
    expect(answer.status, JSON.stringify(answer.body)).toBe(status)
    return answer
  }

  /** Creates and starts a session, shows its QR (JSON and PNG) and links it with a pairing code. */
  const linked = async (name: string, phoneNumber: string) => {
    const created = await answers(call("POST", "/api/sessions", { body: { name, autoStart: true } }), 201)
    const id = created.body.id as string
    const qr = await eventually(() => call("GET", `/api/sessions/${id}/qr`), (answer) => answer.status === 200)
    expect(qr.headers.get("content-type")).toContain("application/json")
    const image = await answers(call("GET", `/api/sessions/${id}/qr?format=png`), 200)
    expect(image.headers.get("content-type")).toBe("image/png")
    await answers(call("POST", `/api/sessions/${id}/pairing-code`, { body: { phoneNumber } }), 200)
    const ready = await eventually(() => call("GET", `/api/sessions/${id}`), (answer) => (answer.body as { status: string }).status === "ready")
    return { id, phone: (ready.body as { phone: string }).phone }
  }

  let sender: { id: string; phone: string }
  let peer: { id: string; phone: string }
  let s: string
  let chatId: string

  it("builds a strict validator: no duplicate $id, and every operation named, summarised and described", async () => {
    const document = await fetchDocument()
    const ids: Array<string> = []
    const collect = (node: unknown): void => {
      if (typeof node !== "object" || node === null) return
      if (typeof (node as { $id?: unknown }).$id === "string") ids.push((node as { $id: string }).$id)
      Object.values(node).forEach(collect)
    }
    collect(document)
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([])
    const operations = operationsOf(document)
    expect(new Set(operations.map((operation) => operation.id)).size).toBe(operations.length)
    expect(operations.filter((operation) => !/^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/.test(operation.id)).map((operation) => operation.id)).toEqual([])
    expect(operations.filter((operation) => !operation.spec.summary || !operation.spec.description).map((operation) => operation.id)).toEqual([])
    expect(document.servers).toEqual([expect.objectContaining({ url: "/" })])
    // one schema for a status, never a union of one error class with itself
    const forbidden = document.paths["/api/sessions"].get.responses["403"].content["application/json"].schema
    expect(forbidden).toEqual({ $ref: "#/components/schemas/Forbidden" })
    expect(document.components.schemas.Forbidden.properties.code.enum).toContain("IP_NOT_ALLOWED")
  })

  it("answers every operation called with ids that name nothing as declared (404, 400, or a list)", async () => {
    const nothing = "0190d5e2-0000-7000-8000-00000000dead"
    const placeholders: Record<string, string> = { chatId: "15550000000@c.us", groupId: "120363000000000001@g.us", number: "15550000000" }
    for (const operation of conformance.operations) {
      const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => placeholders[name] ?? nothing)
      await call(operation.method, path, operation.method === "GET" || operation.method === "DELETE" ? {} : { body: {} })
    }
  })

  it("answers sessions and messages as declared", async () => {
    // a sticker is converted, a picture scaled: the samples' bare magic numbers would not do
    const picture = (await sharp({ create: { width: 64, height: 64, channels: 3, background: "#00ff00" } }).png().toBuffer()).toString("base64")
    await answers(call("GET", "/api/health"), 200)
    await answers(call("GET", "/api/health/live"), 200)
    await answers(call("GET", "/api/health/ready"), 200)
    sender = await linked("contract-sender", "+15551230001")
    peer = await linked("contract-peer", "+15551230002")
    s = `/api/sessions/${sender.id}`
    chatId = `${peer.phone}@c.us`
    await answers(call("GET", "/api/sessions"), 200)
    await answers(call("GET", "/api/sessions?page=1&limit=1"), 200)
    await answers(call("GET", "/api/sessions?page=two"), 400)
    await answers(call("POST", "/api/sessions", { body: { name: "contract-sender" } }), 409)
    await answers(call("GET", s), 200)
    await answers(call("GET", `${s}/me`), 200)
    await answers(call("GET", `${s}/proxy`), 200)
    await answers(call("PUT", `${s}/proxy`, { body: { url: null } }), 200)
    await answers(call("GET", `${s}/settings`), 200)
    await answers(call("PUT", `${s}/settings`, { body: { rejectCalls: false } }), 200)

    const text = await answers(call("POST", `${s}/messages/send-text`, { body: { chatId, text: "hello" } }), 201)
    const messageId = text.body.messageId as string
    await answers(call("POST", `${s}/messages/send-text`, { body: { chatId, text: 1 } }), 400)
    const image = await answers(call("POST", `${s}/messages/send-image`, { body: { chatId, media: { data: base64(png()) } } }), 201)
    await answers(call("POST", `${s}/messages/send-video`, { body: { chatId, media: { data: base64(mp4()) } } }), 201)
    await answers(call("POST", `${s}/messages/send-audio`, { body: { chatId, media: { data: base64(opus()) }, ptt: true } }), 201)
    const document = new FormData()
    document.set("chatId", chatId)
    document.set("file", new Blob([pdf()], { type: "application/pdf" }), "report.pdf")
    await answers(call("POST", `${s}/messages/send-document`, { form: document }), 201)
    await answers(call("POST", `${s}/messages/send-sticker`, { body: { chatId, media: { data: picture } } }), 201)
    await answers(call("POST", `${s}/messages/send-location`, { body: { chatId, latitude: 1, longitude: 2 } }), 201)
    await answers(call("POST", `${s}/messages/send-contact`, { body: { chatId, contacts: [{ name: "Ann", phone: "+15551234567" }] } }), 201)
    const poll = await answers(call("POST", `${s}/messages/send-poll`, { body: { chatId, name: "tea?", options: ["yes", "no"] } }), 201)
    const bulk = await answers(call("POST", `${s}/messages/send-bulk`, { body: { messages: [{ type: "text", chatId, text: "one" }] } }), 202)
    await answers(call("GET", `${s}/messages/batch/${bulk.body.batchId}`), 200)
    await call("POST", `${s}/messages/batch/${bulk.body.batchId}/cancel`)
    await answers(call("GET", `${s}/messages?limit=2`), 200)
    await answers(call("GET", `${s}/messages?direction=out`), 200)
    for (const sent of [messageId, image.body.messageId, poll.body.messageId]) {
      await eventually(() => call("GET", `${s}/messages/${sent}`), (answer) => !["pending"].includes((answer.body as { status: string }).status))
    }
    const media = await answers(call("GET", `${s}/messages/${image.body.messageId}/media`), 200)
    expect(media.headers.get("content-type")).toBe("image/png")
    await answers(call("POST", `${s}/messages/react`, { body: { chatId, messageId, emoji: "👍" } }), 200)
    await answers(call("POST", `${s}/messages/read`, { body: { chatId } }), 200)
    await answers(call("PUT", `${s}/messages/${messageId}`, { body: { text: "hello again" } }), 200)
    await answers(call("POST", `${s}/messages/${messageId}/star`, { body: { starred: true } }), 200)
    await answers(call("POST", `${s}/messages/${messageId}/pin`, { body: { pinned: true } }), 200)
    await answers(call("POST", `${s}/messages/${messageId}/forward`, { body: { chatId } }), 201)
    await answers(call("POST", `${s}/messages/poll-vote`, { body: { chatId, messageId: poll.body.messageId, options: ["yes"] } }), 200)
    await answers(call("GET", `${s}/messages/${poll.body.messageId}/poll`), 200)
    await answers(call("DELETE", `${s}/messages/${messageId}?for=me`), 200)
    await answers(call("POST", `${s}/presence`, { body: { state: "online" } }), 200)
    await answers(call("POST", `${s}/presence/subscribe`, { body: { chatId } }), 200)
    await call("GET", `${s}/presence/${chatId}`)

    const doomed = await answers(call("POST", "/api/sessions", { body: { name: "contract-doomed" } }), 201)
    const doomedPath = `/api/sessions/${doomed.body.id}`
    await answers(call("POST", `${doomedPath}/start`), 200)
    await answers(call("GET", `${doomedPath}/qr`), 200)
    await answers(call("POST", `${doomedPath}/restart`), 200)
    await answers(call("POST", `${doomedPath}/stop`), 200)
    await answers(call("POST", `${doomedPath}/logout`), 200)
    await answers(call("DELETE", doomedPath), 204)
  })

  it("answers chats, contacts, groups, channels, labels, profile, status and calls as declared", async () => {
    const picture = (await sharp({ create: { width: 64, height: 64, channels: 3, background: "#00ff00" } }).png().toBuffer()).toString("base64")
    await answers(call("GET", `${s}/chats`), 200)
    await answers(call("GET", `${s}/chats/${chatId}`), 200)
    await answers(call("GET", `${s}/chats/${chatId}/messages`), 200)
    await answers(call("POST", `${s}/chats/${chatId}/archive`, { body: { archived: true } }), 200)
    await answers(call("POST", `${s}/chats/${chatId}/pin`, { body: { pinned: true } }), 200)
    await answers(call("POST", `${s}/chats/${chatId}/mute`, { body: { until: null } }), 200)
    await answers(call("POST", `${s}/chats/${chatId}/unread`), 200)
    await call("POST", `${s}/chats/${chatId}/history`, { body: { count: 10 } })

    await answers(call("GET", `${s}/contacts`), 200)
    await answers(call("GET", `${s}/contacts/check/${peer.phone}`), 200)
    await answers(call("GET", `${s}/contacts/${chatId}`), 200)
    const lid = await call("GET", `${s}/contacts/${chatId}/lid`)
    if (lid.status === 200 && typeof (lid.body as { lid?: unknown }).lid === "string") {
      await call("GET", `${s}/contacts/lid/${(lid.body as { lid: string }).lid}`)
    }
    await call("GET", `${s}/contacts/${chatId}/picture`)
    await answers(call("POST", `${s}/contacts/${chatId}/block`), 200)
    await answers(call("GET", `${s}/contacts/blocklist`), 200)
    await answers(call("POST", `${s}/contacts/${chatId}/unblock`), 200)

    const group = await answers(call("POST", `${s}/groups`, { body: { subject: "contract", participants: [chatId] } }), 201)
    const g = `${s}/groups/${group.body.id}`
    await answers(call("GET", `${s}/groups`), 200)
    await answers(call("GET", g), 200)
    await answers(call("PUT", `${g}/subject`, { body: { subject: "contract 2" } }), 200)
    await answers(call("PUT", `${g}/description`, { body: { description: "about" } }), 200)
    await answers(call("PUT", `${g}/settings`, { body: { announce: true } }), 200)
    await answers(call("POST", `${g}/participants/promote`, { body: { participants: [chatId] } }), 200)
    await answers(call("POST", `${g}/participants/demote`, { body: { participants: [chatId] } }), 200)
    await answers(call("DELETE", `${g}/participants`, { body: { participants: [chatId] } }), 200)
    await answers(call("POST", `${g}/participants`, { body: { participants: [chatId] } }), 200)
    await answers(call("GET", `${g}/invite-code`), 200)
    await answers(call("POST", `${g}/invite-code/revoke`), 200)
    await answers(call("GET", `${g}/requests`), 200)
    await call("POST", `${g}/requests/approve`, { body: { participants: [chatId] } })
    await call("POST", `${g}/requests/reject`, { body: { participants: [chatId] } })
    await answers(call("PUT", `${g}/picture`, { body: { media: { data: picture } } }), 204)
    await answers(call("DELETE", `${g}/picture`), 204)
    await answers(call("POST", `${g}/leave`), 204)
    const theirs = await answers(call("POST", `/api/sessions/${peer.id}/groups`, { body: { subject: "theirs", participants: [`${sender.phone}@c.us`] } }), 201)
    const invite = await answers(call("GET", `/api/sessions/${peer.id}/groups/${theirs.body.id}/invite-code`), 200)
    await answers(call("POST", `${s}/groups/${theirs.body.id}/leave`), 204)
    await answers(call("POST", `${s}/groups/join`, { body: { code: invite.body.code } }), 200)

    const channel = await answers(call("POST", `${s}/channels`, { body: { name: "contract news" } }), 201)
    await answers(call("GET", `${s}/channels`), 200)
    await answers(call("GET", `${s}/channels/${channel.body.id}`), 200)
    await answers(call("GET", `${s}/channels/${channel.body.id}/messages`), 200)
    await answers(call("POST", `/api/sessions/${peer.id}/channels/subscribe`, { body: { channelId: channel.body.id } }), 200)
    await answers(call("DELETE", `${s}/channels/${channel.body.id}`), 204)
    // labels are for business accounts: a plain one is refused (409 NOT_A_BUSINESS_ACCOUNT) as declared
    await answers(call("GET", `${s}/labels`), 200)
    await answers(call("POST", `${s}/labels`, { body: { name: "vip" } }), 409)
    await answers(call("GET", `${s}/labels/chat/${chatId}`), 200)
    await Effect.runPromise(gateway().network.setBusiness(sender.id, true))
    const label = await answers(call("POST", `${s}/labels`, { body: { name: "vip", color: 3 } }), 201)
    await answers(call("POST", `${s}/labels/chat/${chatId}`, { body: { labelId: label.body.id } }), 200)
    await answers(call("DELETE", `${s}/labels/chat/${chatId}/${label.body.id}`), 200)

    await answers(call("GET", `${s}/profile`), 200)
    await answers(call("PUT", `${s}/profile/name`, { body: { name: "Contract" } }), 200)
    await answers(call("PUT", `${s}/profile/about`, { body: { about: "testing" } }), 200)
    await answers(call("PUT", `${s}/profile/picture`, { body: { media: { data: picture } } }), 200)
    await answers(call("DELETE", `${s}/profile/picture`), 200)

    const status = await answers(call("POST", `${s}/status/text`, { body: { text: "status", contacts: [chatId] } }), 201)
    await answers(call("POST", `${s}/status/image`, { body: { media: { data: base64(png()) }, contacts: [chatId] } }), 201)
    await answers(call("POST", `${s}/status/video`, { body: { media: { data: base64(mp4()) }, contacts: [chatId] } }), 201)
    await answers(call("GET", `${s}/status`), 200)
    await eventually(() => call("GET", `${s}/messages/${status.body.messageId}`), (answer) => (answer.body as { status: string }).status !== "pending")
    await answers(call("DELETE", `${s}/status/${status.body.messageId}`), 204)

    const ringing = await answers(call("POST", `/api/sandbox/sessions/${sender.id}/incoming-call`, { body: { from: peer.id } }), 201)
    await answers(call("GET", `${s}/calls`), 200)
    await answers(call("POST", `${s}/calls/${ringing.body.callId}/reject`), 200)
    await answers(call("POST", `${s}/calls/${ringing.body.callId}/reject`), 409)
    await answers(call("DELETE", `${s}/chats/${chatId}`), 204)
  })

  it("answers webhooks, keys, audit, metrics and live events as declared", async () => {
    const hook = await answers(call("POST", "/api/webhooks", { body: { url: receiver.url } }), 201)
    receiver.setSecret(hook.body.secret)
    const w = `/api/webhooks/${hook.body.id}`
    await answers(call("GET", "/api/webhooks"), 200)
    await answers(call("GET", w), 200)
    await answers(call("PUT", w, { body: { maxAttempts: 3 } }), 200)
    const tested = await answers(call("POST", `${w}/test`), 200)
    await answers(call("GET", `${w}/deliveries`), 200)
    await answers(call("POST", `/api/webhooks/deliveries/${tested.body.deliveryId}/redeliver`), 200)
    await answers(call("DELETE", w), 204)
    await answers(call("POST", "/api/webhooks", { body: { url: "not a url" } }), 400)
    const own = await answers(call("POST", `${s}/webhooks`, { body: { url: receiver.url, events: ["message.received"] } }), 201)
    await answers(call("GET", `${s}/webhooks`), 200)
    await answers(call("DELETE", `/api/webhooks/${own.body.id}`), 204)

    const key = await answers(call("POST", "/api/auth/api-keys", { body: { name: "limited", role: "viewer", rateLimitPerMinute: 1 } }), 201)
    const k = `/api/auth/api-keys/${key.body.id}`
    await answers(call("GET", k), 200)
    await answers(call("GET", "/api/auth/api-keys"), 200)
    await answers(call("PUT", k, { body: { name: "limited key" } }), 200)
    // a key's rate limit: the RateLimit-* headers on every answer, then 429 with Retry-After
    const allowed = await answers(call("GET", "/api/sessions", { key: key.body.key }), 200)
    expect(allowed.headers.get("ratelimit-limit")).toBe("1")
    const limited = await answers(call("GET", "/api/sessions", { key: key.body.key }), 429)
    expect(limited.headers.get("retry-after")).not.toBeNull()
    await answers(call("POST", `${s}/messages/send-text`, { key: key.body.key, body: { chatId, text: "no" } }), 429)
    await answers(call("POST", `${k}/revoke`), 200)
    await answers(call("DELETE", k), 204)

    await answers(call("GET", "/api/audit?limit=5"), 200)
    await answers(call("GET", "/api/metrics"), 200)
    await answers(call("GET", `/api/events?sessionId=${sender.id}`, { headers: { "last-event-id": "0" } }), 200)
  })

  it("answers the refusals any operation may meet as declared: no key, a wrong role, a body over the cap, unreadable JSON", async () => {
    await answers(call("GET", "/api/sessions", { key: null }), 401)
    await answers(call("POST", `${s}/messages/send-text`, { key: null, body: {} }), 401)
    const viewer = await answers(call("POST", "/api/auth/api-keys", { body: { name: "viewer", role: "viewer" } }), 201)
    await answers(call("POST", `${s}/messages/send-text`, { key: viewer.body.key, body: { chatId, text: "no" } }), 403)
    const oversized = JSON.stringify({ chatId, text: "x".repeat(gateway().settings.bodyMaxBytes) })
    await answers(call("POST", `${s}/messages/send-text`, { raw: oversized }), 413)
    await answers(call("PUT", `${s}/settings`, { raw: oversized }), 413)
    await answers(call("PUT", `${s}/settings`, { raw: "{".repeat(10) }), 400)
  })

  it("found every answer as declared, and called every operation of the document", () => {
    expect(conformance.mismatches).toEqual([])
    const uncalled = conformance.operations.map((operation) => operation.id).filter((id) => !conformance.exercised.has(id))
    expect(uncalled).toEqual([])
    // and each one succeeded at least once: a contract checked on its refusals alone says little
    const neverSucceeded = [...conformance.exercised].filter(([, statuses]) => ![...statuses].some((status) => status < 300)).map(([id]) => id)
    expect(neverSucceeded).toEqual([])
  })
})

/**
 * A draining gateway refuses every request but the health checks with 503 (`Draining.ts`), which
 * the document declares on every operation. Seen on a real process told to stop (SIGTERM) while
 * sends held back by the pacing keep it draining. Needs a fresh `npm run build`.
 */
describe("the OpenAPI document, while the gateway drains", () => {
  const spawnGateway = useGatewayProcesses()

  it("declares the 503 every operation answers, with its headers", { timeout: 60_000 }, async () => {
    const gateway = await spawnGateway({
      dataDir: tempDir("switchboard-contract-drain-"),
      env: { API_KEY: TEST_KEY, SEND_RATE_PER_MINUTE: "60", SHUTDOWN_TIMEOUT_MS: "20000" }
    })
    const conformance = makeConformance((await gateway.call("GET", "/api/openapi.json")).body)
    const asGateway = { call: gateway.call } as Pick<TestGateway, "call"> as TestGateway
    const sender = await readySession(asGateway, "drain-sender")
    const recipient = await readySession(asGateway, "drain-recipient")
    const s = `/api/sessions/${sender.id}`
    for (const text of ["one", "two", "three", "four"]) {
      expect((await gateway.call("POST", `${s}/messages/send-text`, { body: { chatId: recipient.phone, text } })).status).toBe(201)
    }

    gateway.signal("SIGTERM")
    const call = async (method: string, path: string, body?: unknown) => {
      const answer = await gateway.call(method, path, body === undefined ? {} : { body })
      conformance.check(method, new URL(path, gateway.baseUrl).pathname, answer)
      return answer
    }
    await eventually(() => call("GET", "/api/health/ready"), (answer) => answer.status === 503, 5_000)
    const refusals = [
      await call("GET", "/api/sessions"),
      await call("POST", `${s}/messages/send-text`, { chatId: recipient.phone, text: "too late" }),
      await call("PUT", `${s}/settings`, { rejectCalls: true }),
      await call("DELETE", `${s}/chats/${recipient.phone}@c.us`),
      await call("GET", `${s}/messages/${sender.id}/media`),
      await call("GET", "/api/metrics")
    ]
    expect(refusals.map((answer) => answer.status)).toEqual([503, 503, 503, 503, 503, 503])
    expect(conformance.mismatches).toEqual([])
    await gateway.exited
  })
})
