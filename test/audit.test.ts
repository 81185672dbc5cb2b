import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Exit, Layer, Option, Scope } from "effect"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { storeOfDatabase } from "../src/app/App.js"
import type { AuditRecord } from "../src/domain/Audit.js"
import { AppSettings } from "../src/domain/Settings.js"
import { AuditRepo } from "../src/runtime/ports/store/AuditRepo.js"
import { Audit } from "../src/services/Audit.js"
import { startGateway, tempDir, type TestGateway, testSettings, useGateway } from "./support/gateway.js"

interface AuditEntry {
  readonly id: string
  readonly keyId: string | null
  readonly keyName: string | null
  readonly action: string
  readonly outcome: string
  readonly status: number
  readonly code: string | null
  readonly target: string
  readonly sessionId: string | null
  readonly clientIp: string
  readonly requestId: string
  readonly method: string
}

describe("the audit log", () => {
  const gateway = useGateway()
  const audit = async (query = "") => (await gateway().call("GET", `/api/audit${query}`)).body.data as Array<AuditEntry>

  it("records changes with who, where, what and how it went, and refused requests, but not plain reads", async () => {
    const created = await gateway().call("POST", "/api/sessions", { body: { name: "audited" } })
    const sessionId = created.body.id as string
    await gateway().call("POST", `/api/sessions/${sessionId}/start`)
    const invalid = await gateway().call("POST", "/api/sessions", { body: { name: 42 } })
    const viewer = (await gateway().call("POST", "/api/auth/api-keys", { body: { name: "auditor's viewer", role: "viewer" } })).body
    await gateway().call("POST", `/api/sessions/${sessionId}/stop`, { key: viewer.key })
    await gateway().call("GET", "/api/sessions", { key: "sb_wrong_key_000000000000000000000000000000000" })
    await gateway().call("GET", `/api/sessions/${sessionId}`)

    const entries = await audit()
    const [adminKey] = (await gateway().call("GET", "/api/auth/api-keys")).body.data as Array<{ id: string; name: string }>
    const create = entries.find((entry) => entry.action === "sessions.create" && entry.status === 201)!
    expect(create).toMatchObject({
      keyId: adminKey!.id,
      keyName: adminKey!.name,
      clientIp: "127.0.0.1",
      method: "POST",
      target: "/api/sessions",
      outcome: "success",
      code: null
    })
    expect(create.requestId).toBe(created.headers.get("x-request-id"))
    expect(entries.find((entry) => entry.action === "sessions.start")).toMatchObject({ sessionId, outcome: "success", status: 200 })
    expect(entries.find((entry) => entry.requestId === invalid.headers.get("x-request-id"))).toMatchObject({
      outcome: "failure",
      status: 400,
      code: "VALIDATION_FAILED"
    })
    expect(entries.find((entry) => entry.action === "sessions.stop")).toMatchObject({
      keyId: viewer.id,
      outcome: "denied",
      status: 403,
      code: "FORBIDDEN",
      sessionId
    })
    expect(entries.find((entry) => entry.action === "sessions.list")).toMatchObject({ keyId: null, outcome: "denied", status: 401, code: "UNAUTHORIZED" })
    expect(entries.some((entry) => entry.action === "sessions.get")).toBe(false)
    // Newest first.
    expect(entries.map((entry) => entry.id)).toEqual([...entries.map((entry) => entry.id)].sort().reverse())
  })

  it("filters by key, session, action and outcome, and pages", async () => {
    const all = await audit()
    const denied = await audit("?outcome=denied")
    expect(denied.length).toBeGreaterThanOrEqual(2)
    expect(denied.every((entry) => entry.outcome === "denied")).toBe(true)
    const creates = await audit("?action=sessions.create")
    expect(creates.length).toBe(2)
    const sessionId = all.find((entry) => entry.action === "sessions.start")!.sessionId!
    expect((await audit(`?sessionId=${sessionId}`)).map((entry) => entry.action).sort()).toEqual(["sessions.start", "sessions.stop"])
    const viewerId = denied.find((entry) => entry.keyId !== null)!.keyId!
    expect((await audit(`?keyId=${viewerId}`)).map((entry) => entry.action)).toEqual(["sessions.stop"])

    const page = await gateway().call("GET", "/api/audit?page=2&limit=2")
    expect(page.body.data.pagination).toEqual({ page: 2, limit: 2, total: all.length, total_pages: Math.ceil(all.length / 2) })
    expect(page.body.data.items.map((entry: AuditEntry) => entry.id)).toEqual(all.slice(2, 4).map((entry) => entry.id))
    const future = new Date(Date.now() + 60_000).toISOString()
    expect(await audit(`?since=${future}`)).toEqual([])
    expect((await gateway().call("GET", "/api/audit?outcome=maybe")).body.code).toBe("VALIDATION_FAILED")
  })

  it("is for admin keys only", async () => {
    const operator = (await gateway().call("POST", "/api/auth/api-keys", { body: { name: "op", role: "operator" } })).body.key
    const answer = await gateway().call("GET", "/api/audit", { key: operator })
    expect([answer.status, answer.body.code]).toEqual([403, "FORBIDDEN"])
  })
})

describe("the audit log's view of routes", () => {
  const gateway = useGateway()
  const audit = async () => (await gateway().call("GET", "/api/audit")).body.data as Array<AuditEntry>

  it("names the action and session of the endpoint the router matched, on a route with two parameters", async () => {
    const sessionId = (await gateway().call("POST", "/api/sessions", { body: { name: "batches" } })).body.id as string
    // a batch id that reads like the route's own words: the parameters are the router's, not a guess
    const cancelled = await gateway().call("POST", `/api/sessions/${sessionId}/messages/batch/cancel/cancel`)
    expect(cancelled.body.code).toBe("BATCH_NOT_FOUND")
    expect((await audit()).find((entry) => entry.requestId === cancelled.headers.get("x-request-id"))).toMatchObject({
      action: "messages.cancelBatch",
      sessionId,
      target: `/api/sessions/${sessionId}/messages/batch/cancel/cancel`,
      outcome: "failure",
      status: 404
    })
  })
})

describe("audit retention", () => {
  it("drops records older than AUDIT_RETENTION_DAYS when the gateway starts, and keeps the rest", async () => {
    const dataDir = tempDir()
    const run = async <A>(use: (gateway: TestGateway) => Promise<A>) => {
      const scope = await Effect.runPromise(Scope.make())
      try {
        return await use(await Effect.runPromise(Scope.extend(startGateway({ dataDir }), scope)))
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }
    await run((gateway) => gateway.call("POST", "/api/sessions", { body: { name: "recent" } }))
    const old = new Date(Date.now() - 91 * 24 * 3600 * 1000).toISOString()
    await Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`INSERT INTO audit_log (id, at, request_id, client_ip, method, action, target, outcome, status)
          VALUES ('00000000-0000-7000-8000-000000000001', ${old}, 'old', '127.0.0.1', 'POST', 'sessions.create', '/api/sessions', 'success', 201)`).pipe(
        Effect.provide(SqliteClient.layer({ filename: path.join(dataDir, "switchboard.db") }))
      )
    )

    const actions = await run(async (gateway) => {
      await new Promise((resolve) => setTimeout(resolve, 300))
      return ((await gateway.call("GET", "/api/audit")).body.data as Array<AuditEntry>).map((entry) => entry.requestId)
    })
    expect(actions).not.toContain("old")
    expect(actions.length).toBe(1)
  })
})

describe("the audit log's writer", () => {
  const record = (id: string, action: string): AuditRecord => ({
    id,
    at: new Date().toISOString(),
    requestId: `req-${action}`,
    keyId: null,
    keyName: null,
    clientIp: "127.0.0.1",
    method: "POST",
    action,
    target: "/api/sessions",
    sessionId: null,
    outcome: "success",
    status: 201,
    code: null
  })

  it("writes what came together in one go, and a record the Store refuses is lost alone, not with its batch-mates", async () => {
    const dataDir = tempDir()
    const store = storeOfDatabase(`sqlite:${path.join(dataDir, "switchboard.db")}`)
    const kept = await Effect.runPromise(Effect.gen(function*() {
      const settings = yield* testSettings({ dataDir })
      // Records handed over at once; the third has the first's id, which the Store refuses.
      yield* Effect.gen(function*() {
        const audit = yield* Audit
        yield* Effect.all([record("a-1", "first"), record("a-2", "second"), record("a-1", "clash"), record("a-4", "fourth")].map(audit.record))
      }).pipe(Effect.provide(Audit.layer.pipe(Layer.provide(AppSettings.layer(settings)), Layer.provide(store))), Effect.scoped)
      // Written by the time the layer closed; read back on a fresh Store.
      return yield* Effect.flatMap(AuditRepo, (repo) => repo.list({}, Option.none())).pipe(Effect.provide(store), Effect.scoped)
    }))
    expect(kept.items.map((entry) => entry.action).sort()).toEqual(["first", "fourth", "second"])
  })
})
