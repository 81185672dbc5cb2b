import { Duration, Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type ChatId, defaultSettings, Messaging, Sessions, SwitchboardCore } from "../src/index.js"
import { sandboxEngineLayer } from "../src/entry/sandbox.js"
import { eventually, readySession, TEST_KEY, tempDir, type TestGateway } from "./support/gateway.js"
import { png } from "./support/mediaSamples.js"
import { type GatewayProcess, type ProcessExit, useGatewayProcesses } from "./support/process.js"

/**
 * Graceful shutdown as an operator sees it: on SIGTERM the gateway stops taking new work
 * (readiness and new requests 503), lets in-flight requests and the sends its connected
 * sessions had accepted finish within SHUTDOWN_TIMEOUT_MS, and exits 0; what did not go out
 * goes out after the next start. Needs a fresh `npm run build`.
 */

const spawnGateway = useGatewayProcesses()

const withKey = { API_KEY: TEST_KEY }

/** `readySession` only needs `call`, which a process offers too. */
const asGateway = (gateway: GatewayProcess) => ({ call: gateway.call }) as Pick<TestGateway, "call"> as TestGateway

const sendText = async (gateway: GatewayProcess, sessionId: string, chatId: string, text: string) => {
  const response = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId, text } })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.messageId as string
}

interface StoredMessage {
  readonly id: string
  readonly text: string | null
  readonly status: string
  readonly statusHistory: ReadonlyArray<{ readonly status: string; readonly at: string }>
}

const message = (gateway: GatewayProcess, sessionId: string, messageId: string) =>
  gateway.call("GET", `/api/sessions/${sessionId}/messages/${messageId}`).then((r) => r.body as StoredMessage)

const messages = async (gateway: GatewayProcess, sessionId: string, direction: "in" | "out") => {
  const response = await gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=${direction}`)
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body.data as ReadonlyArray<StoredMessage>
}

/** When the message went out (its one `sent` status change), in ms since the epoch. */
const sentAt = (stored: StoredMessage) => {
  const sent = stored.statusHistory.filter((change) => change.status === "sent")
  expect(sent, JSON.stringify(stored)).toHaveLength(1)
  return Date.parse(sent[0]!.at)
}

const wentOut = (status: string) => ["sent", "delivered", "read"].includes(status)

/** Sends SIGTERM and waits for the exit; how long it took is measured from the signal. */
const terminate = async (gateway: GatewayProcess, withinMs: number): Promise<{ exit: ProcessExit; tookMs: number }> => {
  const signalledAt = Date.now()
  gateway.signal("SIGTERM")
  return waitForExit(gateway, signalledAt, withinMs)
}

const waitForExit = async (gateway: GatewayProcess, signalledAt: number, withinMs: number) => {
  let timer: NodeJS.Timeout | undefined
  const exit = await Promise.race([
    gateway.exited,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no exit within ${withinMs} ms of SIGTERM; output:\n${gateway.output()}`)), withinMs)
    })
  ]).finally(() => clearTimeout(timer))
  return { exit, tookMs: Date.now() - signalledAt }
}

/** The gateway's closing line: how long the drain took and what it left. */
const drainReport = (output: string) => {
  const match = /drained in (\d+) ms; left: (\d+) request\(s\) in flight .*?, (\d+) queued send\(s\)/.exec(output)
  expect(match, output).not.toBeNull()
  return { tookMs: Number(match![1]), requests: Number(match![2]), sends: Number(match![3]) }
}

/** The annotations of the access lines (one a request) among a gateway's JSON log lines. */
const accessLines = (output: string): ReadonlyArray<Record<string, unknown>> =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { message: unknown; annotations?: Record<string, unknown> })
    .filter((line) => line.message === "request").map((line) => line.annotations ?? {})

/** A media URL on loopback that answers only after `delayMs`; `requested` settles when the gateway asks. */
const slowMediaServer = async (body: Uint8Array, delayMs: number) => {
  let onRequest: () => void = () => {}
  const requested = new Promise<void>((resolve) => (onRequest = resolve))
  const server = http.createServer((_, response) => {
    onRequest()
    setTimeout(() => response.writeHead(200, { "content-type": "image/png" }).end(body), delayMs)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow.png`, requested }
}

describe("SIGTERM with sends held back by the pacing", () => {
  it("refuses new work, lets the queued sends go out, exits 0, and sends none of them twice after a restart", async () => {
    const dataDir = tempDir("switchboard-shutdown-")
    // One send a second (a little more with jitter): the last sends wait their turn.
    const first = await spawnGateway({ dataDir, env: { ...withKey, SEND_RATE_PER_MINUTE: "60", SHUTDOWN_TIMEOUT_MS: "20000" } })
    const sender = await readySession(asGateway(first), "drain-sender")
    const recipient = await readySession(asGateway(first), "drain-recipient")
    const texts = ["drain 1", "drain 2", "drain 3", "drain 4"]
    const ids: Array<string> = []
    for (const text of texts) ids.push(await sendText(first, sender.id, recipient.phone, text))
    expect((await message(first, sender.id, ids.at(-1)!)).status).toBe("pending")

    const signalledAt = Date.now()
    first.signal("SIGTERM")
    const notReady = await eventually(() => first.call("GET", "/api/health/ready"), (r) => r.status === 503, 5_000)
    expect(notReady.body).toMatchObject({ statusCode: 503, code: "SERVICE_UNAVAILABLE" })
    expect((await first.call("GET", "/api/health/live")).status).toBe(200)
    const refused = await first.call("POST", `/api/sessions/${sender.id}/messages/send-text`, {
      body: { chatId: recipient.phone, text: "too late" }
    })
    expect(refused.status).toBe(503)
    expect(refused.body).toEqual({ statusCode: 503, error: "Service Unavailable", code: "SERVICE_UNAVAILABLE", message: expect.any(String) })
    expect(refused.headers.get("connection")).toBe("close")
    const refusedId = refused.headers.get("x-request-id")

    const { exit } = await waitForExit(first, signalledAt, 15_000)
    const exitedAt = Date.now()
    expect(exit, first.output()).toEqual({ code: 0, signal: null })
    const drained = drainReport(first.output())
    expect(drained).toMatchObject({ requests: 0, sends: 0 })
    expect(first.output()).toMatch(/shutting down: draining \d+ request\(s\) in flight and [1-9]\d* queued send\(s\)/)
    // The Store was flushed: nothing is left in SQLite's write-ahead log.
    const wal = path.join(dataDir, "switchboard.db-wal")
    expect(fs.existsSync(wal) ? fs.statSync(wal).size : 0).toBe(0)

    // The refusal is logged and audited under the endpoint it was for, like any other answer.
    expect(accessLines(first.output()).find((line) => line.requestId === refusedId)).toMatchObject({
      route: "/api/sessions/:sessionId/messages/send-text",
      status: 503
    })

    const second = await spawnGateway({ dataDir, env: withKey })
    const audited = (await second.call("GET", "/api/audit")).body.data as ReadonlyArray<{ readonly requestId: string }>
    expect(audited.find((entry) => entry.requestId === refusedId)).toMatchObject({
      action: "messages.sendText",
      sessionId: sender.id,
      status: 503,
      code: "SERVICE_UNAVAILABLE"
    })
    const outbox = await messages(second, sender.id, "out")
    expect(outbox.map((stored) => stored.id).sort()).toEqual([...ids].sort())
    for (const stored of outbox) {
      expect(wentOut(stored.status), JSON.stringify(stored)).toBe(true)
      // It went out before the first process exited, not after the restart.
      expect(sentAt(stored)).toBeLessThanOrEqual(exitedAt)
    }
    // The last one was still held by the pacing when the signal came.
    expect(sentAt(outbox.find((stored) => stored.id === ids.at(-1))!)).toBeGreaterThanOrEqual(signalledAt - 50)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const inbox = await messages(second, recipient.id, "in")
    expect(inbox.map((stored) => stored.text).sort()).toEqual(texts)
    expect(JSON.stringify(await messages(second, sender.id, "out"))).not.toContain("too late")
    expect((await terminate(second, 10_000)).exit).toEqual({ code: 0, signal: null })
    console.info(`drain with ${texts.length} paced sends: ${drained.tookMs} ms`)
  }, 60_000)
})

describe("SIGTERM during a slow request", () => {
  it("answers the request in flight before exiting", async () => {
    const media = await slowMediaServer(png("fetched slowly"), 1_500)
    const gateway = await spawnGateway({
      dataDir: tempDir("switchboard-shutdown-"),
      env: { ...withKey, MEDIA_ALLOW_PRIVATE: "true", SHUTDOWN_TIMEOUT_MS: "20000" }
    })
    const sender = await readySession(asGateway(gateway), "slow-sender")
    const recipient = await readySession(asGateway(gateway), "slow-recipient")
    const sending = gateway.call("POST", `/api/sessions/${sender.id}/messages/send-image`, {
      body: { chatId: recipient.phone, media: { url: media.url } }
    })
    await media.requested
    const shutdown = terminate(gateway, 15_000)

    const response = await sending
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    expect(response.headers.get("connection")).toBe("close")
    const { exit, tookMs } = await shutdown
    expect(exit, gateway.output()).toEqual({ code: 0, signal: null })
    const drained = drainReport(gateway.output())
    expect(drained).toMatchObject({ requests: 0, sends: 0 })
    expect(drained.tookMs).toBeGreaterThanOrEqual(1_000)
    console.info(`drain with a request in flight: ${drained.tookMs} ms (exit ${tookMs} ms after SIGTERM)`)
  }, 40_000)
})

describe("SIGTERM with an event stream open", () => {
  it("ends the stream instead of waiting for it", async () => {
    const gateway = await spawnGateway({ dataDir: tempDir("switchboard-shutdown-"), env: { ...withKey, SHUTDOWN_TIMEOUT_MS: "20000" } })
    const stream = await fetch(`${gateway.baseUrl}/api/events`, { headers: { "x-api-key": TEST_KEY } })
    expect(stream.status).toBe(200)

    // Waiting for the stream would take the whole SHUTDOWN_TIMEOUT_MS (20 s), and keep the server open after.
    const { exit, tookMs } = await terminate(gateway, 10_000)
    expect(exit, gateway.output()).toEqual({ code: 0, signal: null })
    expect(drainReport(gateway.output())).toMatchObject({ requests: 0, sends: 0 })
    await stream.body?.cancel().catch(() => {})
    console.info(`drain with an event stream open: exit ${tookMs} ms after SIGTERM`)
  }, 30_000)
})

describe("SIGTERM when the queued sends need longer than SHUTDOWN_TIMEOUT_MS", () => {
  it("exits soon after the timeout and sends the rest after the next start", async () => {
    const dataDir = tempDir("switchboard-shutdown-")
    // One send every ten seconds: only the first goes out before the timeout.
    const first = await spawnGateway({ dataDir, env: { ...withKey, SEND_RATE_PER_MINUTE: "6", SHUTDOWN_TIMEOUT_MS: "1000" } })
    const sender = await readySession(asGateway(first), "late-sender")
    const recipient = await readySession(asGateway(first), "late-recipient")
    const texts = ["late 1", "late 2", "late 3"]
    const ids: Array<string> = []
    for (const text of texts) ids.push(await sendText(first, sender.id, recipient.phone, text))
    await eventually(() => message(first, sender.id, ids[0]!), (stored) => wentOut(stored.status))

    const { exit, tookMs } = await terminate(first, 10_000)
    const exitedAt = Date.now()
    expect(exit, first.output()).toEqual({ code: 0, signal: null })
    // It waited out the timeout, and not much longer (a 2-core CI machine is slow to stop).
    expect(tookMs).toBeGreaterThanOrEqual(900)
    expect(tookMs).toBeLessThan(1_000 + 5_000)
    const drained = drainReport(first.output())
    expect(drained).toMatchObject({ requests: 0, sends: 2 })

    const second = await spawnGateway({ dataDir, env: withKey })
    for (const id of ids.slice(1)) {
      const stored = await eventually(() => message(second, sender.id, id), (stored) => wentOut(stored.status), 10_000)
      expect(sentAt(stored)).toBeGreaterThan(exitedAt)
    }
    await eventually(() => messages(second, recipient.id, "in"), (inbox) => inbox.length >= texts.length, 10_000)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const inbox = await messages(second, recipient.id, "in")
    expect(inbox.map((stored) => stored.text).sort()).toEqual(texts)
    expect((await terminate(second, 10_000)).exit).toEqual({ code: 0, signal: null })
    console.info(`drain cut off by SHUTDOWN_TIMEOUT_MS=1000: ${drained.tookMs} ms (exit ${tookMs} ms after SIGTERM)`)
  }, 60_000)
})

describe("an embedder closing the SwitchboardCore layer", () => {
  it("drains the same way: the sends held by the pacing go out before the scope is closed", async () => {
    const dataDir = tempDir("switchboard-shutdown-")
    const settings = await Effect.runPromise(defaultSettings({
      dataDir,
      databaseUrl: `sqlite:${dataDir}/sb.db`,
      engine: "sandbox",
      sandboxPairDelay: Duration.millis(20),
      pacing: { sendsPerMinute: 120 },
      shutdownTimeout: Duration.seconds(20)
    }))
    const core = () => SwitchboardCore(settings, sandboxEngineLayer(settings))
    const echo = "15550007777@c.us" as ChatId

    const { ids, sessionId } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sessions = yield* Sessions
      const messaging = yield* Messaging
      const session = yield* sessions.create({ name: "embedded", autoStart: true })
      yield* sessions.awaitStatus(session.id, (status) => status === "ready", "10 seconds")
      const ids: Array<string> = []
      for (const text of ["embedded 1", "embedded 2", "embedded 3"]) {
        ids.push((yield* messaging.sendText(session.id, { chatId: echo, text })).messageId)
      }
      expect((yield* messaging.get(session.id, ids.at(-1)!)).status).toBe("pending")
      return { ids, sessionId: session.id }
    }).pipe(Effect.provide(core()))))
    const closedAt = Date.now()

    const stored = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const messaging = yield* Messaging
      return yield* Effect.forEach(ids, (id) => messaging.get(sessionId, id))
    }).pipe(Effect.provide(core()))))
    for (const message of stored) {
      expect(wentOut(message.status), JSON.stringify(message)).toBe(true)
      expect(sentAt(message)).toBeLessThanOrEqual(closedAt)
    }
  }, 30_000)
})
