import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { eventually, readySession, TEST_KEY, tempDir, type TestGateway } from "./support/gateway.js"
import { base64, png } from "./support/mediaSamples.js"
import { type GatewayProcess, useGatewayProcesses } from "./support/process.js"

/**
 * The gateway as an operator runs it: `node dist/bundle/main.js`, configured by the environment,
 * stopped by signals, restarted on the same DATA_DIR. Needs a fresh `npm run build`.
 */

const spawnGateway = useGatewayProcesses()

const withKey = { API_KEY: TEST_KEY }

/** `readySession` only needs `call`, which a process offers too. */
const asGateway = (gateway: GatewayProcess) => ({ call: gateway.call }) as Pick<TestGateway, "call"> as TestGateway

const getSession = async (gateway: GatewayProcess, id: string) => {
  const response = await gateway.call("GET", `/api/sessions/${id}`)
  expect(response.status).toBe(200)
  return response.body
}

const createSession = async (gateway: GatewayProcess, body: object) => {
  const response = await gateway.call("POST", "/api/sessions", { body })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.id as string
}

const sendText = async (gateway: GatewayProcess, sessionId: string, chatId: string, text: string) => {
  const response = await gateway.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId, text } })
  expect(response.status, JSON.stringify(response.body)).toBe(201)
  return response.body.messageId as string
}

const messageStatus = (gateway: GatewayProcess, sessionId: string, messageId: string) =>
  gateway.call("GET", `/api/sessions/${sessionId}/messages/${messageId}`).then((r) => r.body.status as string)

const messages = async (gateway: GatewayProcess, sessionId: string, direction: "in" | "out") => {
  const response = await gateway.call("GET", `/api/sessions/${sessionId}/messages?direction=${direction}`)
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  // Without page/limit the list is not paginated: `{data: [...]}`.
  return response.body.data as Array<{ id: string; type: string; text: string; status: string; fromMe: boolean; chatId: string }>
}

/** Ends the process with `signal` and expects a clean exit (code 0) within 10 s. */
const shutDown = async (gateway: GatewayProcess, signal: "SIGTERM" | "SIGINT") => {
  gateway.signal(signal)
  const exit = await Promise.race([
    gateway.exited,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no exit within 10 s of ${signal}; output:\n${gateway.output()}`)), 10_000)
    )
  ])
  expect(exit, gateway.output()).toEqual({ code: 0, signal: null })
}

/** Log lines at ERROR or FATAL level, or anything that looks like a stack trace. */
const errorLines = (output: string) => output.split("\n").filter((line) => /\b(ERROR|FATAL)\b|^\s+at |Error:/.test(line))

describe("restart on the same DATA_DIR (SIGTERM)", () => {
  it("restores the running sessions without relinking, keeps the messages, and goes on sending", async () => {
    const dataDir = tempDir("switchboard-process-")
    const first = await spawnGateway({ dataDir, env: withKey })

    const alpha = await readySession(asGateway(first), "alpha")
    const beta = await readySession(asGateway(first), "beta")
    const hello = await sendText(first, alpha.id, beta.phone, "hello beta, before the restart")
    await eventually(() => messageStatus(first, alpha.id, hello), (status) => status === "delivered")
    await eventually(() => messages(first, beta.id, "in"), (items) => items.length === 1)
    const gamma = await createSession(first, { name: "gamma" })
    await shutDown(first, "SIGTERM")

    // With SANDBOX_PAIR_DELAY_MS=0 the simulated phone never scans a QR: a session that had to
    // link again would sit at qr_ready. Reaching ready proves it reconnected with its stored creds.
    const second = await spawnGateway({ dataDir, env: { ...withKey, SANDBOX_PAIR_DELAY_MS: "0" } })
    const seen = new Map<string, Set<string>>([[alpha.id, new Set()], [beta.id, new Set()]])
    const qrAnswers = new Set<number>()
    await eventually(async () => {
      const statuses = await Promise.all([alpha.id, beta.id].map(async (id) => {
        const session = await getSession(second, id)
        seen.get(id)!.add(session.status)
        qrAnswers.add((await second.call("GET", `/api/sessions/${id}/qr`)).status)
        return session.status as string
      }))
      return statuses
    }, (statuses) => statuses.every((status) => status === "ready"), 10_000)

    expect(seen.get(alpha.id)).not.toContain("qr_ready")
    expect(seen.get(beta.id)).not.toContain("qr_ready")
    expect(qrAnswers).not.toContain(200)
    expect(await getSession(second, alpha.id)).toMatchObject({ status: "ready", phone: alpha.phone, lastError: null })
    expect(await getSession(second, beta.id)).toMatchObject({ status: "ready", phone: beta.phone, lastError: null })
    expect(await getSession(second, gamma)).toMatchObject({ status: "created", phone: null })
    expect((await second.call("GET", `/api/sessions/${alpha.id}/qr`)).status).toBe(409)

    expect(await messages(second, alpha.id, "out")).toEqual([
      expect.objectContaining({ id: hello, text: "hello beta, before the restart", status: "delivered", fromMe: true, chatId: `${beta.phone}@c.us` })
    ])
    expect(await messages(second, beta.id, "in")).toEqual([
      expect.objectContaining({ text: "hello beta, before the restart", status: "delivered", fromMe: false, chatId: `${alpha.phone}@c.us` })
    ])

    const reply = await sendText(second, beta.id, alpha.phone, "hello alpha, after the restart")
    await eventually(() => messageStatus(second, beta.id, reply), (status) => status === "delivered")
    const alphaInbox = await eventually(() => messages(second, alpha.id, "in"), (items) => items.length === 1)
    expect(alphaInbox[0]).toMatchObject({ text: "hello alpha, after the restart", chatId: `${beta.phone}@c.us` })

    await shutDown(second, "SIGTERM")
    expect(errorLines(first.output() + second.output())).toEqual([])
  }, 40_000)
})

describe("a crash (SIGKILL) with messages on their way", () => {
  const dataDir = tempDir("switchboard-process-")
  const texts = ["crash 1", "crash 2", "crash 3"]
  let gateway: GatewayProcess
  let sender: { id: string; phone: string }
  let recipient: { id: string; phone: string }
  let sent: Array<string> = []

  it("keeps the accepted messages in the Store and brings the sender back ready", async () => {
    const first = await spawnGateway({ dataDir, env: withKey })
    sender = await readySession(asGateway(first), "sender")
    recipient = await readySession(asGateway(first), "recipient")
    const stopped = await first.call("POST", `/api/sessions/${recipient.id}/stop`)
    expect(stopped.body.status).toBe("stopped")
    for (const text of texts) sent.push(await sendText(first, sender.id, recipient.phone, text))
    // `sent`: the network has them and holds them for the recipient, who is away.
    for (const id of sent) await eventually(() => messageStatus(first, sender.id, id), (status) => status === "sent")
    first.signal("SIGKILL")
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" })

    gateway = await spawnGateway({ dataDir, env: withKey })
    await eventually(() => getSession(gateway, sender.id), (session) => session.status === "ready")
    expect(await getSession(gateway, recipient.id)).toMatchObject({ status: "stopped" })
    const outbox = await messages(gateway, sender.id, "out")
    expect(outbox.map((message) => message.id).sort()).toEqual([...sent].sort())
    expect(outbox.map((message) => message.text).sort()).toEqual(texts)
    for (const message of outbox) expect(["sent", "delivered"]).toContain(message.status)

    const started = await gateway.call("POST", `/api/sessions/${recipient.id}/start`)
    expect(started.status).toBe(200)
    await eventually(() => getSession(gateway, recipient.id), (session) => session.status === "ready")
  }, 30_000)

  // The sandbox network keeps what it holds for an offline recipient in the Store, as a real
  // server would keep it whatever happens to the gateway.
  it("delivers each of them to the recipient once it is started again", async () => {
    const inbox = await eventually(() => messages(gateway, recipient.id, "in"), (items) => items.length >= texts.length, 5_000)
    expect(inbox.map((message) => message.text).sort()).toEqual(texts)
    for (const id of sent) await eventually(() => messageStatus(gateway, sender.id, id), (status) => status === "delivered", 5_000)
  }, 15_000)

  it("delivers none of them twice", async () => {
    // Leaves a little time for duplicates to show up.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const inbox = await messages(gateway, recipient.id, "in")
    const received = inbox.map((message) => message.text)
    expect(new Set(received).size).toBe(received.length)
    expect(received.every((text) => texts.includes(text))).toBe(true)
    await shutDown(gateway, "SIGTERM")
  }, 15_000)
})

describe("a crash (SIGKILL) with messages still queued by the pacing", () => {
  it("sends the queued text and media after the restart, each once, the media's bytes intact", async () => {
    const dataDir = tempDir("switchboard-process-")
    // One send a minute: the first goes out, the rest wait in the session's queue.
    const first = await spawnGateway({ dataDir, env: { ...withKey, SEND_RATE_PER_MINUTE: "1" } })
    const sender = await readySession(asGateway(first), "paced-sender")
    const recipient = await readySession(asGateway(first), "paced-recipient")
    const image = png("queued when killed")
    const ids = [
      await sendText(first, sender.id, recipient.phone, "goes at once"),
      (await first.call("POST", `/api/sessions/${sender.id}/messages/send-image`, { body: { chatId: recipient.phone, media: { data: base64(image) } } })).body.messageId as string,
      await sendText(first, sender.id, recipient.phone, "waits its turn")
    ]
    await eventually(() => messageStatus(first, sender.id, ids[0]!), (status) => status === "delivered")
    expect(await messageStatus(first, sender.id, ids[1]!)).toBe("pending")
    first.signal("SIGKILL")
    await first.exited

    const second = await spawnGateway({ dataDir, env: withKey })
    for (const id of ids) await eventually(() => messageStatus(second, sender.id, id), (status) => status === "delivered", 10_000)
    const inbox = await messages(second, recipient.id, "in")
    expect(inbox.map((message) => message.type).sort()).toEqual(["image", "text", "text"])
    const received = inbox.find((message) => message.type === "image")!
    const media = await fetch(`${second.baseUrl}/api/sessions/${recipient.id}/messages/${received.id}/media`, { headers: { "x-api-key": TEST_KEY } })
    expect(Buffer.from(await media.arrayBuffer()).equals(Buffer.from(image))).toBe(true)
    await shutDown(second, "SIGTERM")
  }, 40_000)
})

describe("SIGINT", () => {
  it("shuts down cleanly with a running session", async () => {
    const gateway = await spawnGateway({ dataDir: tempDir("switchboard-process-"), env: withKey })
    await readySession(asGateway(gateway), "interrupted")
    await shutDown(gateway, "SIGINT")
    expect(errorLines(gateway.output())).toEqual([])
  }, 20_000)
})

describe("the bootstrap admin key", () => {
  it("is generated, printed and saved once on a first start without API_KEY, and kept afterwards", async () => {
    const dataDir = tempDir("switchboard-process-")
    const first = await spawnGateway({ dataDir })
    const printed = first.stdout().match(/sb_[A-Za-z0-9_-]{20,}/g) ?? []
    expect(printed, first.output()).toHaveLength(1)
    const key = printed[0]!

    const file = path.join(dataDir, ".api-key")
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(fs.readFileSync(file, "utf8").trim()).toBe(key)

    expect((await first.call("GET", "/api/sessions", { key })).status).toBe(200)
    expect((await first.call("GET", "/api/sessions", { key: `${key}x` })).status).toBe(401)
    expect((await first.call("GET", "/api/sessions", { key: TEST_KEY })).status).toBe(401)
    await shutDown(first, "SIGTERM")

    const second = await spawnGateway({ dataDir, key })
    expect(second.output()).not.toMatch(/sb_[A-Za-z0-9_-]{20,}/)
    expect(second.output()).not.toContain("Generated")
    expect((await second.call("GET", "/api/sessions")).status).toBe(200)
    expect((await second.call("GET", "/api/sessions", { key: "sb_wrong" })).status).toBe(401)
    expect(fs.readFileSync(file, "utf8").trim()).toBe(key)
    await shutDown(second, "SIGTERM")
    expect(second.output()).not.toContain(key)
  }, 20_000)
})

describe("secrets in the logs", () => {
  it("never shows the API key or a proxy password, even at LOG_LEVEL=Debug", async () => {
    const gateway = await spawnGateway({ dataDir: tempDir("switchboard-process-"), env: { ...withKey, LOG_LEVEL: "Debug" } })
    const created = await gateway.call("POST", "/api/sessions", {
      body: { name: "proxied", proxy: { url: "http://user:hunter2@127.0.0.1:9/" } }
    })
    expect(created.status).toBe(201)
    expect(JSON.stringify(created.body)).not.toContain("hunter2")
    const id = created.body.id as string
    await gateway.call("POST", `/api/sessions/${id}/start`)
    await eventually(() => getSession(gateway, id), (session) => session.status === "ready")
    await gateway.call("POST", `/api/sessions/${id}/messages/send-text`, { body: { chatId: "+15550001234", text: "ping" } })
    await gateway.call("GET", `/api/sessions/${id}/messages`)
    await gateway.call("GET", "/api/sessions", { key: "sb_wrong" })
    await gateway.call("GET", "/api/sessions", { key: null, headers: { authorization: `Bearer ${TEST_KEY}` } })
    await gateway.call("POST", "/api/sessions", { body: { name: "bad", proxy: { url: "ftp://user:hunter2@x/" } } })
    await gateway.call("POST", `/api/sessions/${id}/restart`)
    await eventually(() => getSession(gateway, id), (session) => session.status === "ready")
    await shutDown(gateway, "SIGTERM")

    const output = gateway.output()
    expect(output).not.toContain("hunter2")
    expect(output).not.toContain(TEST_KEY)
  }, 20_000)
})
