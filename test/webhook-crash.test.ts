import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { eventually, readySession, TEST_KEY, tempDir, type TestGateway } from "./support/gateway.js"
import { type GatewayProcess, useGatewayProcesses } from "./support/process.js"

/**
 * The outbox across a crash: the gateway is killed (SIGKILL) while webhook deliveries are under
 * way; after a restart on the same data every event reaches the receiver at least once.
 */
const spawnGateway = useGatewayProcesses()
const asGateway = (gateway: GatewayProcess) => ({ call: gateway.call }) as Pick<TestGateway, "call"> as TestGateway

describe("webhooks across a SIGKILL", () => {
  const seen = new Map<string, number>()
  let answered = 0
  // A slow receiver, so that the crash comes while deliveries are still going out.
  const receiver = http.createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => {
      setTimeout(() => {
        const text = JSON.parse(body).data?.message?.text as string | undefined
        if (text !== undefined) seen.set(text, (seen.get(text) ?? 0) + 1)
        answered++
        response.writeHead(200).end()
      }, 40)
    })
  })
  afterAll(() => receiver.close())

  it("delivers every event at least once", async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const dataDir = tempDir("switchboard-webhook-crash-")
    const env = { API_KEY: TEST_KEY, WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_CONCURRENCY_PER_WEBHOOK: "1", WEBHOOK_CONCURRENCY_PER_WEBHOOK_MAX: "1" }
    const first = await spawnGateway({ dataDir, env })
    const alpha = await readySession(asGateway(first), "crash-alpha")
    const beta = await readySession(asGateway(first), "crash-beta")
    const hook = await first.call("POST", "/api/webhooks", { body: { url, events: ["message.received"] } })
    expect(hook.status).toBe(201)

    const texts = Array.from({ length: 40 }, (_, i) => `crash ${i + 1}`)
    for (const text of texts) {
      const sent = await first.call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: beta.phone, text } })
      expect(sent.status).toBe(201)
    }
    // Killed with deliveries half done.
    await eventually(async () => answered, (n) => n >= 5, 15_000)
    first.signal("SIGKILL")
    await first.exited
    expect(seen.size).toBeLessThan(texts.length)

    const second = await spawnGateway({ dataDir, env })
    // Every message reaches the recipient's Store (the network hands over again what was not
    // acknowledged, issue 21), and each has its event in the outbox: each reaches the receiver.
    const inbox = await eventually(
      () => second.call("GET", `/api/sessions/${beta.id}/messages?direction=in`),
      (r) => r.status === 200 && r.body.data.length >= texts.length,
      30_000
    )
    const stored = inbox.body.data.map((m: { text: string }) => m.text) as Array<string>
    await eventually(async () => stored.filter((text) => !seen.has(text)), (missing) => missing.length === 0, 30_000)
    const deliveries = await second.call("GET", `/api/webhooks/${hook.body.id}/deliveries?limit=100`)
    expect(deliveries.body.data.pagination.total).toBeGreaterThanOrEqual(stored.length)
  }, 60_000)
})
