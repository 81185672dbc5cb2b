import { describe, expect, it } from "vitest"
import { Duration } from "effect"
import { get } from "node:http"
import { eventually, TEST_KEY, useGateway } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"
import { type Answer, makeConformance, operationsOf } from "./support/openApiConformance.js"

/**
 * The document at /api/openapi.json is what generated clients trust. Here every operation it
 * declares is called on a real gateway (sandbox engine, SQLite file, HTTP over loopback), with
 * requests that succeed and requests that fail as callers' do, and every answer is checked by a
 * third-party validator against what the document declares for it.
 */
describe("the OpenAPI document", () => {
  // automatic pairing off: a started session shows its QR until a pairing code links it
  const gateway = useGateway({ sandboxPairDelay: Duration.zero })

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

  it("builds a strict validator: no duplicate $id or component, and every operation named, summarised and described", async () => {
    const document = await fetchDocument()
    const ids: Array<string> = []
    const collect = (node: unknown): void => {
      if (typeof node !== "object" || node === null) return
      if (typeof (node as { $id?: unknown }).$id === "string") ids.push((node as { $id: string }).$id)
      Object.values(node).forEach(collect)
    }
    collect(document)
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([])
    // throws on a duplicate $id, an unknown keyword or format
    makeConformance(document)
    const operations = operationsOf(document)
    expect(new Set(operations.map((operation) => operation.id)).size).toBe(operations.length)
    expect(operations.filter((operation) => !/^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/.test(operation.id)).map((operation) => operation.id)).toEqual([])
    expect(operations.filter((operation) => !operation.spec.summary || !operation.spec.description).map((operation) => operation.id)).toEqual([])
    expect(document.servers).toEqual([expect.objectContaining({ url: "/" })])
  })

  it("declares every status, content type, header and body that each operation really answers", { timeout: 120_000 }, async () => {
    const document = await fetchDocument()
    const conformance = makeConformance(document)
    const { baseUrl } = gateway()

    const call = async (
      method: string,
      path: string,
      options: { body?: unknown; raw?: string; key?: string | null; headers?: Record<string, string> } = {}
    ): Promise<Answer> => {
      const headers: Record<string, string> = { ...options.headers }
      const key = options.key === undefined ? TEST_KEY : options.key
      if (key !== null) headers["x-api-key"] = key
      const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
      if (body !== undefined) headers["content-type"] ??= "application/json"
      const abort = new AbortController()
      const response = await fetch(`${baseUrl}${path}`, { method, headers, signal: abort.signal, ...(body === undefined ? {} : { body }) }).catch((error) => {
        throw new Error(`${method} ${path}: ${error}`, { cause: error })
      })
      const type = response.headers.get("content-type") ?? ""
      let parsed: unknown
      if (type.startsWith("text/event-stream")) abort.abort()
      else if (type.includes("json")) parsed = await response.json()
      else parsed = new Uint8Array(await response.arrayBuffer())
      const answer = { status: response.status, headers: response.headers, body: parsed }
      conformance.check(method, new URL(path, baseUrl).pathname, answer)
      return answer
    }

    /** The answer, which must have `status` (the test says what it got otherwise). */
    const answers = async (answer: Promise<Answer>, status: number) => {
      const { body, status: actual } = await answer
      expect(actual, JSON.stringify(body)).toBe(status)
      return answer
    }

    // Every operation once with ids that name nothing: each answers its 404 (or 400 for a body
    // it cannot take, or 200 for a list): all errors callers meet.
    const nothing = "0190d5e2-0000-7000-8000-00000000dead"
    for (const operation of conformance.operations) {
      const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) =>
        name === "chatId" ? "15550000000@c.us" : name === "groupId" ? "120363000000000001@g.us" : name === "number" ? "15550000000" : nothing)
      await call(operation.method, path, operation.method === "GET" || operation.method === "DELETE" ? {} : { body: {} })
    }

    // a session waiting for its QR answers it as JSON, or as the PNG itself; a pairing code links it
    const linked = async (name: string, phoneNumber: string) => {
      const created = await answers(call("POST", "/api/sessions", { body: { name, autoStart: true } }), 201)
      const id = (created.body as { id: string }).id
      const qr = await eventually(() => call("GET", `/api/sessions/${id}/qr`), (answer) => answer.status === 200)
      expect(qr.headers.get("content-type")).toContain("application/json")
      const qrImage = await answers(call("GET", `/api/sessions/${id}/qr?format=png`), 200)
      expect(qrImage.headers.get("content-type")).toBe("image/png")
      await answers(call("POST", `/api/sessions/${id}/pairing-code`, { body: { phoneNumber } }), 200)
      const ready = await eventually(() => call("GET", `/api/sessions/${id}`), (answer) => (answer.body as { status: string }).status === "ready")
      return { id, phone: (ready.body as { phone: string }).phone }
    }

    // And answers that succeed, on a ready session and a peer.
    const sender = await linked("contract-sender", "+15551230001")
    const peer = await linked("contract-peer", "+15551230002")
    const s = `/api/sessions/${sender.id}`
    const chatId = `${peer.phone}@c.us`
    await answers(call("GET", "/api/health"), 200)
    await answers(call("GET", "/api/health/live"), 200)
    await answers(call("GET", "/api/health/ready"), 200)
    await answers(call("GET", "/api/sessions"), 200)
    await answers(call("GET", "/api/sessions?page=1&limit=1"), 200)
    await answers(call("GET", "/api/sessions?page=two"), 400)
    await answers(call("GET", s), 200)
    await answers(call("GET", `${s}/me`), 200)
    await answers(call("GET", `${s}/proxy`), 200)
    await answers(call("PUT", `${s}/proxy`, { body: { url: null } }), 200)
    await answers(call("GET", `${s}/settings`), 200)
    const text = await call("POST", `${s}/messages/send-text`, { body: { chatId, text: "hello" } })
    expect(text.status, JSON.stringify(text.body)).toBe(201)
    const messageId = (text.body as { messageId: string }).messageId
    await answers(call("POST", `${s}/messages/send-text`, { body: { chatId, text: 1 } }), 400)
    const image = await call("POST", `${s}/messages/send-image`, { body: { chatId, media: { data: base64(png()) } } })
    expect(image.status, JSON.stringify(image.body)).toBe(201)
    await answers(call("POST", `${s}/messages/send-location`, { body: { chatId, latitude: 1, longitude: 2 } }), 201)
    await answers(call("POST", `${s}/messages/send-contact`, { body: { chatId, contacts: [{ name: "Ann", phone: "+15551234567" }] } }), 201)
    const poll = await call("POST", `${s}/messages/send-poll`, { body: { chatId, name: "tea?", options: ["yes", "no"] } })
    expect(poll.status, JSON.stringify(poll.body)).toBe(201)
    const bulk = await call("POST", `${s}/messages/send-bulk`, { body: { messages: [{ type: "text", chatId, text: "one" }] } })
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(202)
    const batchId = (bulk.body as { batchId: string }).batchId
    await answers(call("GET", `${s}/messages/batch/${batchId}`), 200)
    await call("POST", `${s}/messages/batch/${batchId}/cancel`)
    await answers(call("GET", `${s}/messages?limit=2`), 200)
    await answers(call("GET", `${s}/messages`), 200)
    await eventually(() => call("GET", `${s}/messages/${messageId}`), (answer) => (answer.body as { status?: string }).status !== "pending")
    const imageId = (image.body as { messageId: string }).messageId
    const media = await call("GET", `${s}/messages/${imageId}/media`)
    expect(media.status, JSON.stringify(media.body)).toBe(200)
    expect(media.headers.get("content-type")).toBe("image/png")
    await answers(call("POST", `${s}/messages/react`, { body: { chatId, messageId, emoji: "👍" } }), 200)
    await answers(call("POST", `${s}/messages/read`, { body: { chatId } }), 200)
    await call("PUT", `${s}/messages/${messageId}`, { body: { text: "hello again" } })
    await call("POST", `${s}/messages/${messageId}/star`, { body: { starred: true } })
    await call("GET", `${s}/messages/${(poll.body as { messageId: string }).messageId}/poll`)
    await answers(call("GET", `${s}/chats`), 200)
    await call("GET", `${s}/chats/${chatId}`)
    await call("GET", `${s}/chats/${chatId}/messages`)
    await answers(call("GET", `${s}/contacts`), 200)
    await call("GET", `${s}/contacts/${chatId}`)
    await answers(call("GET", `${s}/groups`), 200)
    await answers(call("GET", `${s}/profile`), 200)
    await answers(call("GET", `${s}/status`), 200)
    await answers(call("GET", `${s}/calls`), 200)
    await call("POST", `${s}/presence`, { body: { presence: "available" } })

    const doomed = await answers(call("POST", "/api/sessions", { body: { name: "contract-doomed" } }), 201)
    const doomedId = (doomed.body as { id: string }).id
    await answers(call("POST", `/api/sessions/${doomedId}/start`), 200)
    await answers(call("POST", `/api/sessions/${doomedId}/restart`), 200)
    await answers(call("POST", `/api/sessions/${doomedId}/stop`), 200)
    await answers(call("DELETE", `/api/sessions/${doomedId}`), 204)

    // webhooks, keys, audit, metrics, events
    const hook = await call("POST", "/api/webhooks", { body: { url: "http://93.184.216.34:9/hook" } })
    expect(hook.status, JSON.stringify(hook.body)).toBe(201)
    const hookId = (hook.body as { id: string }).id
    await answers(call("GET", "/api/webhooks"), 200)
    await answers(call("GET", `/api/webhooks/${hookId}`), 200)
    await answers(call("PUT", `/api/webhooks/${hookId}`, { body: { enabled: false } }), 200)
    await answers(call("GET", `/api/webhooks/${hookId}/deliveries`), 200)
    await answers(call("DELETE", `/api/webhooks/${hookId}`), 204)
    await answers(call("POST", "/api/webhooks", { body: { url: "not a url" } }), 400)
    const key = await call("POST", "/api/auth/api-keys", { body: { name: "limited", role: "viewer", rateLimitPerMinute: 1 } })
    expect(key.status, JSON.stringify(key.body)).toBe(201)
    const { id: keyId, key: limitedKey } = key.body as { id: string; key: string }
    await answers(call("GET", `/api/auth/api-keys/${keyId}`), 200)
    await answers(call("GET", "/api/auth/api-keys"), 200)
    await answers(call("GET", "/api/sessions", { key: limitedKey }), 200)
    const limited = await call("GET", "/api/sessions", { key: limitedKey })
    expect(limited.status, JSON.stringify(limited.body)).toBe(429)
    expect(limited.headers.get("retry-after")).not.toBeNull()
    await answers(call("POST", `${s}/messages/send-text`, { key: limitedKey, body: { chatId, text: "no" } }), 429)
    await answers(call("POST", `/api/auth/api-keys/${keyId}/revoke`), 200)
    await answers(call("DELETE", `/api/auth/api-keys/${keyId}`), 204)
    await answers(call("GET", "/api/audit"), 200)
    await answers(call("GET", "/api/metrics"), 200)
    await answers(call("GET", "/api/events", { headers: { "last-event-id": "0" } }), 200)

    // refusals every operation may meet: no key, a wrong role, a body over the cap
    await answers(call("GET", "/api/sessions", { key: null }), 401)
    await answers(call("POST", `${s}/messages/send-text`, { key: null, body: {} }), 401)
    const tooLarge = await call("POST", `${s}/messages/send-text`, { raw: JSON.stringify({ chatId, text: "x".repeat(gateway().settings.bodyMaxBytes) }) })
    expect(tooLarge.status, JSON.stringify(tooLarge.body)).toBe(413)
    await answers(call("PUT", `/api/webhooks/${hookId}`, { raw: "{".repeat(10) }), 400)

    expect(conformance.mismatches).toEqual([])
    expect(conformance.operations.map((operation) => operation.id).filter((id) => !conformance.exercised.has(id))).toEqual([])
  })
})
