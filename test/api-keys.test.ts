import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import { readySession, TEST_KEY, useGateway } from "./support/gateway.js"

const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString()

describe("API keys over the API", () => {
  const gateway = useGateway()

  it("creates a key shown once, lists it without the key, and the key works with its role", async () => {
    const created = await gateway().call("POST", "/api/auth/api-keys", { body: { name: "  reporting  ", role: "viewer" } })
    expect(created.status).toBe(201)
    const { key, ...shown } = created.body
    expect(key).toMatch(/^sb_[A-Za-z0-9_-]{43}$/)
    expect(shown).toMatchObject({ name: "reporting", role: "viewer", status: "active", allowedSessions: null, allowedIps: null, expiresAt: null })
    expect(key.startsWith(shown.prefix.replace("…", ""))).toBe(true)
    expect(JSON.stringify(shown)).not.toContain(key)

    const listed = await gateway().call("GET", "/api/auth/api-keys")
    const entry = listed.body.data.find((k: { id: string }) => k.id === shown.id)
    expect(entry).toMatchObject({ name: "reporting", role: "viewer" })
    expect(JSON.stringify(listed.body)).not.toContain(key)
    expect(JSON.stringify(listed.body)).not.toMatch(/keyHash|key_hash/)
    const paged = await gateway().call("GET", "/api/auth/api-keys?limit=1&page=1")
    expect(paged.body.data.items).toHaveLength(1)
    expect(paged.body.data.pagination.total).toBeGreaterThanOrEqual(2)

    expect((await gateway().call("GET", "/api/sessions", { key })).status).toBe(200)
    expect((await gateway().call("POST", "/api/sessions", { key, body: { name: "nope" } })).body.code).toBe("FORBIDDEN")
    // Bearer works as well as X-API-Key.
    expect((await gateway().call("GET", "/api/sessions", { key: null, headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect((await gateway().call("GET", `/api/auth/api-keys/${shown.id}`)).body.lastUsedAt).not.toBeNull()
  })

  it("changes a key's role and limits at once, revokes and deletes it", async () => {
    const { body: { id, key } } = await gateway().call("POST", "/api/auth/api-keys", { body: { name: "changing", role: "viewer" } })
    expect((await gateway().call("POST", "/api/sessions", { key, body: { name: "by-operator" } })).status).toBe(403)

    const updated = await gateway().call("PUT", `/api/auth/api-keys/${id}`, { body: { role: "operator", name: "now operator" } })
    expect(updated.body).toMatchObject({ role: "operator", name: "now operator" })
    expect((await gateway().call("POST", "/api/sessions", { key, body: { name: "by-operator" } })).status).toBe(201)

    await gateway().call("PUT", `/api/auth/api-keys/${id}`, { body: { allowedIps: ["10.9.0.0/16"] } })
    const fromLoopback = await gateway().call("GET", "/api/sessions", { key })
    expect([fromLoopback.status, fromLoopback.body.code]).toEqual([403, "IP_NOT_ALLOWED"])
    await gateway().call("PUT", `/api/auth/api-keys/${id}`, { body: { allowedIps: null } })
    expect((await gateway().call("GET", "/api/sessions", { key })).status).toBe(200)

    const revoked = await gateway().call("POST", `/api/auth/api-keys/${id}/revoke`)
    expect(revoked.body).toMatchObject({ status: "revoked" })
    expect(revoked.body.revokedAt).not.toBeNull()
    const refused = await gateway().call("GET", "/api/sessions", { key })
    expect([refused.status, refused.body.code, refused.body.message]).toEqual([401, "UNAUTHORIZED", "this API key was revoked"])

    expect((await gateway().call("DELETE", `/api/auth/api-keys/${id}`)).status).toBe(204)
    expect((await gateway().call("GET", `/api/auth/api-keys/${id}`)).body.code).toBe("API_KEY_NOT_FOUND")
    expect((await gateway().call("GET", "/api/sessions", { key })).status).toBe(401)
  })

  it("stops a key at its expiry", async () => {
    const { body } = await gateway().call("POST", "/api/auth/api-keys", { body: { name: "short", role: "viewer", expiresAt: isoIn(700) } })
    expect((await gateway().call("GET", "/api/sessions", { key: body.key })).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 800))
    const expired = await gateway().call("GET", "/api/sessions", { key: body.key })
    expect([expired.status, expired.body.message]).toEqual([401, "this API key has expired"])
    expect((await gateway().call("GET", `/api/auth/api-keys/${body.id}`)).body.status).toBe("expired")
  })

  it("refuses bad key definitions with 400 VALIDATION_FAILED", async () => {
    const bad = [
      { name: "x", role: "superuser" },
      { name: "", role: "viewer" },
      { name: "x", role: "viewer", allowedIps: ["10.0.0.0/33"] },
      { name: "x", role: "viewer", allowedIps: ["not-an-address"] },
      { name: "x", role: "viewer", allowedIps: [] },
      { name: "x", role: "viewer", expiresAt: "yesterday" },
      { name: "x", role: "viewer", expiresAt: isoIn(-60_000) },
      { name: "x", role: "viewer", allowedSessions: "all" },
      { name: "x", role: "viewer", rateLimitPerMinute: -1 }
    ]
    for (const body of bad) {
      const answer = await gateway().call("POST", "/api/auth/api-keys", { body })
      expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([400, "VALIDATION_FAILED"])
    }
    expect((await gateway().call("PUT", "/api/auth/api-keys/nope", { body: { name: "y" } })).body.code).toBe("API_KEY_NOT_FOUND")
  })

  it("never lets the last working admin key go", async () => {
    const keys = (await gateway().call("GET", "/api/auth/api-keys")).body.data as Array<{ id: string; role: string; status: string; name: string }>
    const bootstrap = keys.find((k) => k.name === "bootstrap (API_KEY)")!
    for (const attempt of [
      () => gateway().call("POST", `/api/auth/api-keys/${bootstrap.id}/revoke`),
      () => gateway().call("DELETE", `/api/auth/api-keys/${bootstrap.id}`),
      () => gateway().call("PUT", `/api/auth/api-keys/${bootstrap.id}`, { body: { role: "operator" } }),
      () => gateway().call("PUT", `/api/auth/api-keys/${bootstrap.id}`, { body: { expiresAt: isoIn(60_000) } })
    ]) {
      const answer = await attempt()
      expect([answer.status, answer.body.code]).toEqual([409, "LAST_ADMIN_KEY"])
    }
    // With a second admin key, the first may go.
    const second = await gateway().call("POST", "/api/auth/api-keys", { body: { name: "second admin", role: "admin" } })
    expect((await gateway().call("PUT", `/api/auth/api-keys/${bootstrap.id}`, { body: { name: "bootstrap (API_KEY)" } })).status).toBe(200)
    const revoked = await gateway().call("POST", `/api/auth/api-keys/${bootstrap.id}/revoke`, { key: second.body.key })
    expect(revoked.body.status).toBe("revoked")
    expect((await gateway().call("GET", "/api/sessions", { key: TEST_KEY })).status).toBe(401)
  })
})

describe("a key limited to some sessions", () => {
  const gateway = useGateway({
    webhooks: { timeout: Duration.seconds(1), allowPrivate: true, concurrency: 4, perWebhookConcurrency: 1, perWebhookConcurrencyMax: 1, eventRetention: Duration.hours(1) }
  })

  it("sees, creates and uses only its sessions, by id or by name, and nothing spanning all sessions", async () => {
    const mine = await readySession(gateway(), "tenant-a")
    const theirs = await readySession(gateway(), "tenant-b")
    const { body: { key } } = await gateway().call("POST", "/api/auth/api-keys", {
      body: { name: "tenant a", role: "operator", allowedSessions: ["tenant-a", "tenant-a-2"] }
    })

    const listed = await gateway().call("GET", "/api/sessions", { key })
    expect(listed.body.data.map((s: { name: string }) => s.name)).toEqual(["tenant-a"])
    const paged = await gateway().call("GET", "/api/sessions?page=1&limit=10", { key })
    expect(paged.body.data.pagination.total).toBe(1)

    expect((await gateway().call("POST", "/api/sessions", { key, body: { name: "tenant-a-2" } })).status).toBe(201)
    expect((await gateway().call("POST", "/api/sessions", { key, body: { name: "tenant-c" } })).body.code).toBe("FORBIDDEN")
    expect((await gateway().call("GET", "/api/sessions", { key })).body.data).toHaveLength(2)

    const sent = await gateway().call("POST", `/api/sessions/${mine.id}/messages/send-text`, { key, body: { chatId: theirs.phone, text: "hi" } })
    expect(sent.status).toBe(201)
    expect((await gateway().call("GET", `/api/sessions/${theirs.id}/messages`, { key })).body.code).toBe("FORBIDDEN")

    // Webhooks: its sessions' ones yes; global ones (every session's events) and others' no.
    const own = await gateway().call("POST", `/api/sessions/${mine.id}/webhooks`, { key, body: { url: "http://127.0.0.1:9/hook" } })
    expect(own.status).toBe(201)
    expect((await gateway().call("GET", `/api/webhooks/${own.body.id}`, { key })).status).toBe(200)
    const other = await gateway().call("POST", `/api/sessions/${theirs.id}/webhooks`, { body: { url: "http://127.0.0.1:9/hook" } })
    const global = await gateway().call("POST", "/api/webhooks", { body: { url: "http://127.0.0.1:9/hook" } })
    for (const [method, path] of [
      ["GET", `/api/webhooks/${other.body.id}`],
      ["PUT", `/api/webhooks/${other.body.id}`],
      ["DELETE", `/api/webhooks/${global.body.id}`],
      ["POST", `/api/webhooks/${global.body.id}/test`],
      ["GET", "/api/webhooks"],
      ["POST", "/api/webhooks"],
      ["GET", "/api/events"]
    ] as const) {
      const answer = await gateway().call(method, path, { key, body: { url: "http://127.0.0.1:9/x" } })
      expect([answer.status, answer.body.code], `${method} ${path}`).toEqual([403, "FORBIDDEN"])
    }
    expect((await gateway().call("GET", `/api/webhooks/${other.body.id}`)).status).toBe(200)

    // Its own live events are open to it.
    const abort = new AbortController()
    const stream = await fetch(`${gateway().baseUrl}/api/events?sessionId=${mine.id}`, { headers: { "x-api-key": key }, signal: abort.signal })
    expect(stream.status).toBe(200)
    abort.abort()
    const elsewhere = await gateway().call("GET", `/api/events?sessionId=${theirs.id}`, { key })
    expect(elsewhere.status).toBe(403)
  })
})
