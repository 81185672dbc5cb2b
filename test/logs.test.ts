import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, tempDir } from "./support/gateway.js"
import { type GatewayProcess, useGatewayProcesses } from "./support/process.js"

/**
 * What the gateway writes to stdout and stderr, as an operator's log pipeline gets it: one JSON
 * object a line (LOG_FORMAT's default), the request id on what a request caused, one access
 * line a request, and never a secret. Runs `node dist/bundle/main.js` (needs `npm run build`).
 */

const spawnGateway = useGatewayProcesses()

const random = (prefix: string) => `${prefix}${randomBytes(18).toString("base64url")}`

/** A webhook receiver on loopback answering 500, then 410 Gone (which disables the webhook). */
const startReceiver = async () => {
  const received: Array<http.IncomingHttpHeaders> = []
  const server = http.createServer((request, response) => {
    request.resume().on("end", () => {
      received.push(request.headers)
      response.writeHead(received.length === 1 ? 500 : 410).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, close: () => server.close() }
}

interface LogLine {
  readonly message: unknown
  readonly logLevel: string
  readonly timestamp: string
  readonly annotations: Record<string, unknown>
}

describe("logs (LOG_FORMAT=json, the default)", () => {
  const apiKey = random("sb_logs_")
  /** Everything that must never reach the logs; the scenario adds what it creates. */
  const secrets: Array<string> = [apiKey]
  const secret = (value: string) => (secrets.push(value), value)
  const requestId = "logs-test-request-0001"
  let gateway: GatewayProcess
  let lines: ReadonlyArray<LogLine>

  beforeAll(async () => {
    const receiver = await startReceiver()
    gateway = await spawnGateway({
      dataDir: tempDir("switchboard-logs-"),
      env: {
        API_KEY: apiKey,
        LOG_LEVEL: "Debug",
        WEBHOOK_ALLOW_PRIVATE: "true",
        // a Baileys session behind a proxy that refuses: connection errors get logged
        ENGINE: "baileys",
        WA_WS_URL: "ws://127.0.0.1:9/ws",
        RECONNECT_INITIAL_DELAY_MS: "50",
        RECONNECT_MAX_DELAY_MS: "100",
        RECONNECT_MAX_ATTEMPTS: "2"
      }
    })
    const call = gateway.call

    expect((await call("GET", "/api/health", { key: null })).status).toBe(200)
    const tagged = await call("GET", "/api/sessions", { headers: { "x-request-id": requestId } })
    expect(tagged.headers.get("x-request-id")).toBe(requestId)
    expect((await call("GET", "/api/sessions", { key: null, headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200)
    expect((await call("GET", "/api/sessions", { key: secret(random("sb_wrong_")) })).status).toBe(401)
    expect((await call("GET", `/api/sessions?token=${secret(random("qs_"))}`)).status).toBe(200)
    expect((await call("GET", `/api/nowhere?token=${secret(random("qs_"))}`)).status).toBe(404)
    expect((await call("POST", `/api/sessions?token=${secret(random("qs_"))}`, { raw: "{\"name\":" })).status).toBe(400)

    const webhook = await call("POST", "/api/webhooks", {
      body: { url: receiver.url, events: ["*"], headers: { "X-Receiver-Token": secret(random("hdr_")) } }
    })
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(201)
    expect(secret(webhook.body.secret)).toMatch(/^whsec_/)
    await call("POST", `/api/webhooks/${webhook.body.id}/test`)
    await call("POST", `/api/webhooks/${webhook.body.id}/test`)
    await eventually(async () => receiver.received.length, (count) => count >= 2)
    receiver.close()

    const session = await call("POST", "/api/sessions", { body: { name: "proxied" } })
    expect(session.status, JSON.stringify(session.body)).toBe(201)
    const proxy = await call("PUT", `/api/sessions/${session.body.id}/proxy`, {
      body: { url: `http://user:${secret(random("S3cretPw"))}@127.0.0.1:9/` }
    })
    expect(proxy.status, JSON.stringify(proxy.body)).toBe(200)
    await call("POST", `/api/sessions/${session.body.id}/start`)
    await eventually(() => call("GET", `/api/sessions/${session.body.id}`), (r) => r.body.lastError !== null)

    const key = await call("POST", "/api/auth/api-keys", { body: { name: "logs", role: "viewer" } })
    expect(key.status, JSON.stringify(key.body)).toBe(201)
    expect((await call("GET", "/api/sessions", { key: secret(key.body.key) })).status).toBe(200)

    gateway.signal("SIGTERM")
    expect(await gateway.exited).toEqual({ code: 0, signal: null })
    const stdout = gateway.stdout()
    const logged = stdout.slice(stdout.indexOf("\n", stdout.indexOf("Listening on")) + 1) + gateway.stderr()
    lines = logged.split("\n").filter((line) => line.length > 0).map((line) => {
      try {
        return JSON.parse(line) as LogLine
      } catch {
        throw new Error(`not a JSON log line: ${line}`)
      }
    })
  }, 30_000)
  afterAll(() => gateway?.kill())

  it("writes every line after the banner as one JSON object with message, level and time", () => {
    expect(lines.length).toBeGreaterThan(10)
    for (const line of lines) {
      expect(line, JSON.stringify(line)).toMatchObject({ message: expect.anything(), logLevel: expect.any(String), timestamp: expect.any(String) })
      expect(Number.isNaN(Date.parse(line.timestamp))).toBe(false)
    }
  })

  const accessLines = () => lines.filter((line) => line.message === "request")

  it("writes one access line a request (none for health probes), with the caller's X-Request-Id", () => {
    const access = accessLines().map((line) => line.annotations)
    expect(access.length).toBeGreaterThanOrEqual(12)
    expect(access.filter((line) => String(line.path).startsWith("/api/health"))).toEqual([])
    for (const line of access) {
      expect(line).toMatchObject({ requestId: expect.any(String), method: expect.any(String), path: expect.any(String), status: expect.any(Number), durationMs: expect.any(Number), clientIp: "127.0.0.1" })
    }
    expect(access.filter((line) => line.requestId === requestId)).toEqual([
      expect.objectContaining({ method: "GET", route: "/api/sessions", path: "/api/sessions", status: 200, keyId: expect.any(String) })
    ])
    expect(access).toContainEqual(expect.objectContaining({ status: 401, keyId: null }))
    expect(access).toContainEqual(expect.objectContaining({ route: null, path: "/api/nowhere", status: 404 }))
    expect(access).toContainEqual(expect.objectContaining({ route: "/api/sessions/:sessionId/proxy", method: "PUT", status: 200 }))
  })

  it("tags what a request logs beyond its access line with the request's id", () => {
    const byRequest = new Set(accessLines().map((line) => line.annotations.requestId))
    const others = lines.filter((line) => line.message !== "request" && byRequest.has(line.annotations?.requestId))
    expect(others.length, "no line but the access lines carries a request id").toBeGreaterThan(0)
  })

  it("never writes a secret: keys (right or wrong), webhook secrets and headers, proxy passwords, query strings", () => {
    const output = gateway.output()
    expect(secrets.length).toBeGreaterThanOrEqual(9)
    for (const value of secrets) {
      expect(output.includes(value) || output.includes(encodeURIComponent(value)), `${value.slice(0, 6)}… is in the logs`).toBe(false)
    }
    expect(output).not.toContain("token=")
  })
})
