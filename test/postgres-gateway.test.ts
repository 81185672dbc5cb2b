import { Duration, Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { eventually, readySession, startGateway, TEST_KEY, tempDir, type TestGateway } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"
import { Sessions, Switchboard } from "../src/index.js"
import { postgresStore } from "../src/entry/postgres.js"
import { unavailable } from "./support/servers/availability.js"
import { freshPostgresUrlPromise } from "./support/servers/postgresDatabase.js"

/**
 * The whole gateway on Postgres (`DATABASE_URL=postgres://…`): sandbox sessions message each
 * other over HTTP, and a restart on the same database finds its sessions and messages again.
 */

const skip = unavailable("postgres", "the gateway on Postgres (postgres-gateway.test.ts)")

/** A gateway for the duration of `use`, closed afterwards whatever happens. */
const withGateway = async <A>(overrides: Parameters<typeof startGateway>[0], use: (gateway: TestGateway) => Promise<A>) => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    return await use(await Effect.runPromise(Scope.extend(startGateway(overrides), scope)))
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const sendText = async (gateway: Pick<TestGateway, "call">, sessionId: string, chatId: string, text: string) => {
  const response = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId, text } })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.messageId as string
}

const messages = async (gateway: Pick<TestGateway, "call">, sessionId: string, direction: "in" | "out") => {
  const response = await gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=${direction}`)
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body.data as Array<{ id: string; text: string; status: string; fromMe: boolean; chatId: string }>
}

describe.skipIf(skip)("the gateway on Postgres", () => {
  it("two sandbox sessions message each other over HTTP; a restart on the same database keeps sessions and messages", async () => {
    const databaseUrl = await freshPostgresUrlPromise("gateway")
    const dataDir = tempDir("switchboard-pg-gateway-")

    const before = await withGateway({ databaseUrl, dataDir }, async (gateway) => {
      const health = await gateway.call("GET", "/api/health", { key: null })
      expect(health.body).toMatchObject({ status: "ok", checks: { database: "ok" } })
      const alpha = await readySession(gateway, "alpha")
      const beta = await readySession(gateway, "beta")
      const hello = await sendText(gateway, alpha.id, beta.phone, "hello beta, on postgres")
      await eventually(() => gateway.call("GET", `/api/sessions/${alpha.id}/messages/${hello}`), (r) => r.body.status === "delivered")
      const inbox = await eventually(() => messages(gateway, beta.id, "in"), (items) => items.length === 1)
      expect(inbox[0]).toMatchObject({ text: "hello beta, on postgres", fromMe: false, chatId: `${alpha.phone}@c.us` })
      const reply = await sendText(gateway, beta.id, alpha.phone, "hello alpha")
      await eventually(() => messages(gateway, alpha.id, "in"), (items) => items.length === 1)
      await eventually(() => gateway.call("GET", `/api/sessions/${beta.id}/messages/${reply}`), (r) => r.body.status === "delivered")
      return { alpha, beta, hello, reply }
    })
    // Nothing went to a SQLite file beside the media.
    expect(fs.readdirSync(dataDir).filter((name) => name.endsWith(".db"))).toEqual([])

    // A pair delay of 0: the simulated phone never scans a QR, so "ready" means the stored
    // credentials were used, not a new link.
    await withGateway({ databaseUrl, dataDir, sandboxPairDelay: Duration.zero }, async (gateway) => {
      const { alpha, beta, hello, reply } = before
      const listed = await gateway.call("GET", "/api/sessions")
      expect(listed.body.data.map((s: { name: string }) => s.name).sort()).toEqual(["alpha", "beta"])
      await eventually(
        () => Promise.all([alpha.id, beta.id].map((id) => gateway.call("GET", `/api/sessions/${id}`).then((r) => r.body.status))),
        (statuses) => statuses.every((status) => status === "ready")
      )
      expect(await messages(gateway, alpha.id, "out")).toEqual([
        expect.objectContaining({ id: hello, text: "hello beta, on postgres", status: "delivered", fromMe: true })
      ])
      expect(await messages(gateway, beta.id, "out")).toEqual([
        expect.objectContaining({ id: reply, text: "hello alpha", status: "delivered", fromMe: true })
      ])
      expect(await messages(gateway, beta.id, "in")).toEqual([expect.objectContaining({ text: "hello beta, on postgres" })])

      const again = await sendText(gateway, alpha.id, beta.phone, "after the restart")
      await eventually(() => messages(gateway, beta.id, "in"), (items) => items.length === 2)
      await eventually(() => gateway.call("GET", `/api/sessions/${alpha.id}/messages/${again}`), (r) => r.body.status === "delivered")
    })
  }, 60_000)

  describe("as an operator runs it", () => {
    const spawnGateway = useGatewayProcesses()

    it("`node dist/bundle/main.js` with DATABASE_URL=postgres://… keeps its sessions across a restart", async () => {
      const databaseUrl = await freshPostgresUrlPromise("process")
      const dataDir = tempDir("switchboard-pg-process-")
      const env = { API_KEY: TEST_KEY, DATABASE_URL: databaseUrl }
      const first = await spawnGateway({ dataDir, env })
      const created = await first.call("POST", "/api/sessions", { body: { name: "kept" } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      first.signal("SIGTERM")
      expect(await first.exited).toEqual({ code: 0, signal: null })

      const second = await spawnGateway({ dataDir, env })
      expect((await second.call("GET", `/api/sessions/${created.body.id}`)).body).toMatchObject({ name: "kept" })
      expect((await second.call("GET", "/api/health", { key: null })).body).toMatchObject({ checks: { database: "ok" } })
      second.signal("SIGTERM")
      expect(await second.exited).toEqual({ code: 0, signal: null })
      expect(fs.existsSync(path.join(dataDir, "switchboard.db"))).toBe(false)
    }, 60_000)
  })

  it("an embedder's Switchboard.layer with store: postgresStore(url) keeps sessions in Postgres, not in its dataDir", async () => {
    const databaseUrl = await freshPostgresUrlPromise("embedded") as `postgres://${string}`
    const dataDir = tempDir("switchboard-pg-embedded-")
    const layer = () => Switchboard.layer({ dataDir, engine: "sandbox", store: postgresStore(databaseUrl) })
    const run = <A, E>(program: Effect.Effect<A, E, Sessions>) => Effect.runPromise(Effect.scoped(Effect.provide(program, layer())))
    const created = await run(Effect.flatMap(Sessions, (sessions) => sessions.create({ name: "in postgres" })))
    const found = await run(Effect.flatMap(Sessions, (sessions) => sessions.get(created.id)))
    expect(found.name).toBe("in postgres")
    expect(fs.existsSync(path.join(dataDir, "switchboard.db"))).toBe(false)
  }, 60_000)
})
