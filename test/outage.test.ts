import { Effect, Exit, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, startGateway, type TestGateway } from "./support/gateway.js"
import { freePort, type RunningServer, waitForPort } from "./support/servers/common.js"
import { findPostgresBinDir, startPostgres } from "./support/servers/postgres.js"
import { unavailable } from "./support/servers/availability.js"
import { findRedisServer } from "./support/servers/redis.js"

/**
 * The database goes away under traffic and comes back: readiness says so, requests get a clear
 * 503 (never a hang or a 500), and nothing accepted before is lost.
 */
describe.skipIf(unavailable("postgres", "outage tests") !== undefined)("a Postgres outage", () => {
  let server: RunningServer
  let gateway: TestGateway
  let scope: Scope.CloseableScope
  beforeAll(async () => {
    // A server of its own: stopping the shared one would take every other suite down with it.
    server = await startPostgres(findPostgresBinDir()!)
    scope = await Effect.runPromise(Scope.make())
    gateway = await Effect.runPromise(Scope.extend(startGateway({ databaseUrl: server.env["TEST_POSTGRES_URL"]! }), scope))
  }, 60_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await server.stop()
  })

  const timed = async <A>(request: () => Promise<A>) => {
    const started = Date.now()
    const result = await request()
    return { result, ms: Date.now() - started }
  }

  it("ready turns 503 and requests get 503 while it is down; afterwards all is ready again and nothing accepted is lost", async () => {
    const alpha = await readySession(gateway, "outage-alpha")
    const beta = await readySession(gateway, "outage-beta")
    const send = (text: string) => gateway.call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: beta.phone, text } })
    const accepted = await send("before the outage")
    expect(accepted.status).toBe(201)
    expect((await gateway.call("GET", "/api/health/ready")).status).toBe(200)

    await server.pause!()
    const ready = await eventually(() => gateway.call("GET", "/api/health/ready"), (r) => r.status === 503, 15_000)
    expect(ready.body.code).toBe("SERVICE_UNAVAILABLE")
    const during = await timed(() => send("during the outage"))
    expect([during.result.status, during.result.body.code]).toEqual([503, "SERVICE_UNAVAILABLE"])
    expect(during.ms).toBeLessThan(10_000)
    const list = await gateway.call("GET", `/api/sessions/${alpha.id}/messages`)
    expect(list.status).toBe(503)

    await server.resume!()
    await eventually(() => gateway.call("GET", "/api/health/ready"), (r) => r.status === 200, 30_000)
    for (const session of [alpha, beta]) {
      await eventually(() => gateway.call("GET", `/api/sessions/${session.id}`), (r) => r.body.status === "ready", 30_000)
    }
    const after = await eventually(() => send("after the outage"), (r) => r.status === 201, 15_000)
    expect(after.status).toBe(201)
    const inbox = await eventually(
      () => gateway.call("GET", `/api/sessions/${beta.id}/messages?direction=in`),
      (r) => r.status === 200 && ["before the outage", "after the outage"].every((text) => r.body.data.some((m: { text: string }) => m.text === text)),
      30_000
    )
    expect(inbox.body.data.filter((m: { text: string }) => m.text === "before the outage")).toHaveLength(1)
  }, 120_000)
})

/** A Redis of this test's own on a fixed port, so that it can be stopped and started again there. */
const redisOn = async (port: number): Promise<ChildProcess> => {
  const child = spawn(findRedisServer()!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
  await waitForPort(port, 10_000, child)
  return child
}

describe.skipIf(unavailable("redis", "outage tests") !== undefined)("a Redis outage", () => {
  let gateway: TestGateway
  let scope: Scope.CloseableScope
  let redis: ChildProcess
  let port: number
  beforeAll(async () => {
    port = await freePort()
    redis = await redisOn(port)
    scope = await Effect.runPromise(Scope.make())
    gateway = await Effect.runPromise(Scope.extend(startGateway({ cacheUrl: `redis://127.0.0.1:${port}` }), scope))
  }, 60_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    redis.kill("SIGKILL")
  })

  it("ready turns 503 while Redis is gone, sends are still accepted and delivered, and all is ready again after", async () => {
    const alpha = await readySession(gateway, "redis-alpha")
    const beta = await readySession(gateway, "redis-beta")
    const send = (text: string) => gateway.call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: beta.phone, text } })
    expect((await gateway.call("GET", "/api/health/ready")).status).toBe(200)

    redis.kill("SIGKILL")
    const ready = await eventually(() => gateway.call("GET", "/api/health/ready"), (r) => r.status === 503, 15_000)
    expect(ready.body.details).toMatchObject({ cache: "redis: unreachable" })
    // Redis holds nothing the gateway cannot do without: sends pace locally meanwhile.
    expect((await send("while redis is down")).status).toBe(201)

    redis = await redisOn(port)
    await eventually(() => gateway.call("GET", "/api/health/ready"), (r) => r.status === 200, 30_000)
    expect((await send("after redis is back")).status).toBe(201)
    await eventually(
      () => gateway.call("GET", `/api/sessions/${beta.id}/messages?direction=in`),
      (r) => ["while redis is down", "after redis is back"].every((text) => r.body.data.some((m: { text: string }) => m.text === text)),
      30_000
    )
  }, 120_000)
})
