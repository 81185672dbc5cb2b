import { Duration, Effect, Exit, Option, Scope } from "effect"
import { afterAll, beforeAll, expect } from "vitest"
import { BaileysEngineLive } from "../../src/runtime/engines/baileys/BaileysEngine.js"
import type { DomainEvent } from "../../src/domain/Events.js"
import { eventually, startGatewayWith, tempDir, type TestGateway } from "./gateway.js"
import { type ReceivedMessage, startWaPeer, type WaPeer } from "./wa-peer/index.js"
import { startWebhookReceiver, type WebhookReceiver } from "./webhookReceiver.js"

/**
 * One gateway with ENGINE=baileys linked to the loopback WhatsApp Web peer as `phone`, driven
 * through its REST API, for a whole `describe` block; the events it raises go to a signed
 * webhook. The peer's contacts stand for the people the session talks to.
 */

export interface LinkedSession {
  readonly peer: WaPeer
  readonly gateway: Omit<TestGateway, "network">
  readonly sessionId: string
  readonly hooks: WebhookReceiver
}

/** The events the message surface raises, as a webhook subscribes to them. */
const surfaceEvents: ReadonlyArray<DomainEvent["event"]> = ["message.edited", "message.revoked", "poll.vote", "presence.update"]

export const useLinkedBaileysSession = (phone: string, options: { readonly businessName?: string } = {}) => {
  let linked: LinkedSession | undefined
  let scope: Scope.CloseableScope | undefined
  let peer: WaPeer | undefined
  let hooks: WebhookReceiver | undefined

  beforeAll(async () => {
    peer = await startWaPeer()
    hooks = await startWebhookReceiver()
    scope = await Effect.runPromise(Scope.make())
    const dataDir = tempDir("switchboard-baileys-surface-")
    const gateway = await Effect.runPromise(Scope.extend(
      startGatewayWith(BaileysEngineLive({ waWebSocketUrl: peer.url, mediaCa: peer.mediaCa }), {
        dataDir,
        databaseUrl: `sqlite:${dataDir}/switchboard.db`,
        engine: "baileys",
        // Link previews of loopback pages: the SSRF guard would refuse them, which this lifts.
        media: { url: Option.none(), maxBytes: 64 * 1024 * 1024, allowPrivate: true, fetchTimeout: Duration.seconds(30), incoming: "store", keepRevoked: false },
        webhooks: { timeout: Duration.seconds(2), allowPrivate: true, concurrency: 8, perWebhookConcurrency: 2, perWebhookConcurrencyMax: 2, eventRetention: Duration.hours(1) }
      }),
      scope
    ))
    const hook = await gateway.call("POST", "/api/webhooks", { body: { url: hooks.url, events: surfaceEvents } })
    hooks.setSecret(hook.body.secret)

    const created = await gateway.call("POST", "/api/sessions", { body: { name: `linked-${phone}`, autoStart: true } })
    const sessionId = created.body.id as string
    const qr = await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}/qr`), (r) => r.status === 200, 15_000)
    await peer.scan(qr.body.qr, { phone, ...options })
    await eventually(() => gateway.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "ready", 15_000)
    linked = { peer, gateway, sessionId, hooks }
  })
  afterAll(async () => {
    if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
    await hooks?.close()
    await peer?.close()
  })

  return () => {
    if (!linked) throw new Error("the session has not been linked")
    return linked
  }
}

/** What the tests do through the API, on the linked session. */
export const sessionApi = (linked: () => LinkedSession) => {
  const route = (path: string) => `/api/sessions/${linked().sessionId}${path}`
  const api = {
    get: (path: string) => linked().gateway.call("GET", route(path)),
    post: (path: string, body: unknown) => linked().gateway.call("POST", route(path), { body }),
    put: (path: string, body: unknown) => linked().gateway.call("PUT", route(path), { body }),
    del: (path: string) => linked().gateway.call("DELETE", route(path)),
    message: (id: string) => api.get(`/messages/${id}`),

    /**
     * Sends through the API; resolves with the gateway's message id and the message as the
     * contact `to` decrypted it (the first that `match` accepts).
     */
    sendTo: async (to: string, path: string, body: unknown, match: (m: ReceivedMessage) => boolean) => {
      const arrived = linked().peer.waitFor<ReceivedMessage>("received", (m) => m.to === to && match(m), 15_000)
      const sent = await api.post(path, body)
      expect(sent.status, JSON.stringify(sent.body)).toBe(201)
      return { messageId: sent.body.messageId as string, received: await arrived }
    },

    /** The gateway's copy of a message the contact `from` sent, once stored. */
    receivedFrom: async (from: string, match: (m: any) => boolean) => {
      const inbox = await eventually(
        () => api.get(`/messages?direction=in&chatId=${from}@c.us`),
        (r) => r.body.data.some(match),
        15_000
      )
      return inbox.body.data.find(match)
    },

    /** The webhook deliveries of `event` that `match` accepts, once there is one. */
    delivered: (event: DomainEvent["event"], match: (data: any) => boolean) =>
      eventually(
        async () => linked().hooks.deliveries.filter((d) => d.event === event && match(d.data)),
        (found) => found.length > 0,
        15_000
      )
  }
  return api
}
