import { HttpServer } from "@effect/platform"
import { afterAll, beforeAll } from "vitest"
import { Context, Duration, Effect, Exit, Layer, Logger, LogLevel, Option, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { sandboxEngineLayer, SwitchboardServer } from "../../src/app/App.js"
import { defaultSettings } from "../../src/app/Config.js"
import { type Settings } from "../../src/domain/Settings.js"
import type { Engine } from "../../src/runtime/Engine.js"
import { SandboxNetwork } from "../../src/runtime/engines/sandbox/SandboxNetwork.js"
import type { SqlClient } from "@effect/sql"

export const TEST_KEY = "sb_test_key_0123456789abcdefghijklmnopqrstuvwxyz"

export const tempDir = (prefix = "switchboard-test-") => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

export const testSettings = (overrides: Partial<Settings> = {}) =>
  Effect.gen(function*() {
    const dataDir = overrides.dataDir ?? tempDir()
    return yield* defaultSettings({
      port: 0,
      // The dashboard's own tests give it a port; the others do without it.
      dashboardPort: 0,
      host: "127.0.0.1",
      dataDir,
      databaseUrl: `sqlite:${path.join(dataDir, "switchboard.db")}`,
      engine: "sandbox",
      apiKey: Option.some(Redacted.make(TEST_KEY)),
      sandboxPairDelay: Duration.millis(50),
      // Tests of other things should not wait for the send pacing; its own tests turn it on.
      pacing: { sendsPerMinute: 0 },
      // Tests poll fast; the rate limiter's own tests turn it on.
      rateLimitPerMinute: 0,
      ...overrides
    })
  })

export interface TestGateway {
  readonly baseUrl: string
  readonly settings: Settings
  readonly network: SandboxNetwork["Type"]
  /** fetch against the gateway with the test key (pass `key: null` to send none). */
  readonly call: (method: string, route: string, options?: { body?: unknown; key?: string | null; raw?: string; headers?: Record<string, string> }) => Promise<{ status: number; body: any; headers: Headers }>
}

/** In-process gateways log warnings and errors only: an access line per request would drown the test output. */
const quietly = Logger.withMinimumLogLevel(LogLevel.Warning)

/** A gateway on a loopback port with the sandbox engine and a fresh SQLite file, for one scope. */
export const startGateway = (overrides: Partial<Settings> = {}): Effect.Effect<TestGateway, never, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* testSettings(overrides)
    const context = yield* Layer.build(SwitchboardServer(settings, sandboxEngineLayer(settings))).pipe(quietly, Effect.orDie)
    return { ...served(context, settings), network: Context.get(context, SandboxNetwork) }
  })

/** The same on another engine (e.g. Baileys against a loopback peer). */
export const startGatewayWith = (
  engine: Layer.Layer<Engine, never, SqlClient.SqlClient>,
  overrides: Partial<Settings> = {}
): Effect.Effect<Omit<TestGateway, "network">, never, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* testSettings(overrides)
    const context = yield* Layer.build(SwitchboardServer(settings, engine)).pipe(quietly, Effect.orDie)
    return served(context, settings)
  })

const served = (context: Context.Context<HttpServer.HttpServer>, settings: Settings) => {
  const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
  const baseUrl = `http://127.0.0.1:${address.port}`
  return { baseUrl, settings, call: makeCall(baseUrl) }
}

export const makeCall = (baseUrl: string): TestGateway["call"] => async (method, route, options = {}) => {
  const headers: Record<string, string> = { ...options.headers }
  const key = options.key === undefined ? TEST_KEY : options.key
  if (key !== null) headers["x-api-key"] = key
  let body: string | undefined
  if (options.raw !== undefined) {
    body = options.raw
    headers["content-type"] ??= "application/json"
  } else if (options.body !== undefined && method !== "GET" && method !== "HEAD") {
    body = JSON.stringify(options.body)
    headers["content-type"] = "application/json"
  }
  const response = await fetch(`${baseUrl}${route}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const type = response.headers.get("content-type") ?? ""
  const payload = type.includes("json") ? await response.json() : type.startsWith("image/") ? new Uint8Array(await response.arrayBuffer()) : await response.text()
  return { status: response.status, body: payload, headers: response.headers }
}

/** Polls `probe` until `accept` holds, for at most `timeoutMs`. */
export const eventually = async <A>(probe: () => Promise<A>, accept: (value: A) => boolean, timeoutMs = 10_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last = await probe()
  while (!accept(last)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
    last = await probe()
  }
  return last
}

/** One gateway for a whole `describe` block: started before its tests, closed after. */
export const useGateway = (overrides: Partial<Settings> = {}) => {
  let scope: Scope.CloseableScope | undefined
  let gateway: TestGateway | undefined
  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    gateway = await Effect.runPromise(Scope.extend(startGateway(overrides), scope))
  })
  afterAll(async () => {
    if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
  })
  return () => {
    if (!gateway) throw new Error("the gateway has not started")
    return gateway
  }
}

/** Creates a session, starts it and waits until it is ready; returns its id and phone. */
export const readySession = async (gateway: TestGateway, name: string) => {
  const created = await gateway.call("POST", "/api/sessions", { body: { name } })
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`)
  await gateway.call("POST", `/api/sessions/${created.body.id}/start`)
  const ready = await eventually(() => gateway.call("GET", `/api/sessions/${created.body.id}`), (r) => r.body.status === "ready")
  return { id: created.body.id as string, phone: ready.body.phone as string }
}
