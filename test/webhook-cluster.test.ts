/**
 * The webhook dispatch spread over a cluster (real processes, CLUSTER=on, one Postgres, one
 * Redis): the webhooks are split into shares, each attempted by one runner at a time, so both
 * runners of two deliver, and each event reaches each webhook once.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { eventually } from "./support/gateway.js"
import { startCluster, webhookSuccesses } from "./support/cluster.js"
import { useGatewayProcesses } from "./support/process.js"
import { unavailable } from "./support/servers/availability.js"

useGatewayProcesses()

const WEBHOOKS = 16
const MESSAGES = 10

describe.skipIf(unavailable("postgres", "webhooks over a cluster") ?? unavailable("redis", "webhooks over a cluster"))("webhooks over a cluster of two runners", () => {
  /** How often each webhook (its path) received each event (its `webhook-id`). */
  const received = new Map<string, number>()
  const receiver = http.createServer((request, response) => {
    request.resume().on("end", () => {
      const key = `${request.url} ${request.headers["webhook-id"]}`
      received.set(key, (received.get(key) ?? 0) + 1)
      response.writeHead(204).end()
    })
  })
  afterAll(() => receiver.close())

  it("both runners deliver, and each event reaches each webhook once", async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
    const { runners } = await startCluster(2, { WEBHOOK_ALLOW_PRIVATE: "true" }, "webhook_cluster")
    // Created through either runner: each runner's copy of the webhooks hears of the other's.
    for (let n = 0; n < WEBHOOKS; n++) {
      const created = await runners[n % 2]!.call("POST", "/api/webhooks", { body: { url: `${base}/hook/${n}`, events: ["message.sent"] } })
      expect(created.status).toBe(201)
    }
    const session = await runners[0]!.call("POST", "/api/sessions", { body: { name: "webhooks-spread", autoStart: true } })
    expect(session.status).toBe(201)
    await eventually(() => runners[0]!.call("GET", `/api/sessions/${session.body.id}`), (r) => r.body.status === "ready", 30_000)
    for (let n = 0; n < MESSAGES; n++) {
      const answer = await runners[n % 2]!.call("POST", `/api/sessions/${session.body.id}/messages/send-text`, {
        body: { chatId: "15550004321@c.us", text: `spread ${n}` }
      })
      expect(answer.status).toBe(201)
    }

    const events = () => new Set([...received.keys()].map((key) => key.split(" ")[1]))
    await eventually(async () => received.size, (size) => size >= WEBHOOKS * MESSAGES && size === WEBHOOKS * events().size, 60_000)
    await new Promise((resolve) => setTimeout(resolve, 1_500)) // a second delivery would come now
    const expected = WEBHOOKS * events().size
    expect(received.size).toBe(expected)
    expect([...received].filter(([, count]) => count > 1), "delivered more than once").toEqual([])
    const perRunner = await Promise.all(runners.map(webhookSuccesses))
    expect(perRunner.reduce((a, b) => a + b, 0)).toBe(expected)
    expect(perRunner.every((count) => count > 0), `deliveries per runner: ${perRunner.join(", ")}`).toBe(true)
  }, 120_000)
})
