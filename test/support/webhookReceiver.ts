import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook as StandardWebhook } from "standardwebhooks"

/**
 * A webhook receiver on loopback (for tests against real processes) that verifies every request
 * as a Standard Webhooks receiver would and counts deliveries per event id (`webhook-id`).
 * Requests that do not verify are answered 200 all the same and listed in `problems`.
 */

export interface Delivered {
  readonly id: string
  readonly event: string
  readonly sessionId: string | null
  readonly attempt: string | undefined
  readonly data: any
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>

export const startWebhookReceiver = async () => {
  const deliveries: Array<Delivered> = []
  const problems: Array<string> = []
  let secret: string | undefined
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value ?? ""]))
      try {
        if (secret === undefined) throw new Error("a delivery before the webhook existed")
        // Standard Webhooks: the signature over "{webhook-id}.{webhook-timestamp}.{body}" verifies.
        const payload = new StandardWebhook(secret).verify(body, headers) as { id: string; event: string; sessionId: string | null; data: unknown }
        if (payload.id !== headers["webhook-id"]) throw new Error(`webhook-id ${headers["webhook-id"]} is not the body's id ${payload.id}`)
        if (payload.event !== headers["x-webhook-event"]) throw new Error(`x-webhook-event ${headers["x-webhook-event"]} is not ${payload.event}`)
        deliveries.push({ id: payload.id, event: payload.event, sessionId: payload.sessionId, attempt: headers["x-webhook-attempt"], data: payload.data })
      } catch (error) {
        problems.push(`${(error as Error).message}: ${body.slice(0, 200)}`)
      }
      response.writeHead(200, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    problems,
    /** The webhook's signing secret (`whsec_…`), known once the webhook was created. */
    setSecret: (value: string) => void (secret = value),
    /** How often each event id was delivered. */
    counts: () => {
      const counts = new Map<string, number>()
      for (const { id } of deliveries) counts.set(id, (counts.get(id) ?? 0) + 1)
      return counts
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
