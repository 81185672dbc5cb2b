import type { SocketConfig } from "@whiskeysockets/baileys"
import type { Agent } from "node:http"
import { Agent as HttpsAgent } from "node:https"
import { Effect, Option } from "effect"
import { Agent as UndiciAgent, type Dispatcher } from "undici"
import { redactProxyUrl } from "../../../domain/Session.js"
import { EngineError } from "../../Engine.js"
import { closeProxyAgents, InvalidProxyUrl, makeProxyAgents } from "../../network/proxy.js"

/**
 * How one connection reaches the network besides WhatsApp's defaults: a session's proxy (all
 * three ways, see ./proxy.ts), or else, when the engine is told to trust an extra CA for media
 * (a loopback peer's self-signed media server), an upload agent and a download dispatcher that
 * trust it. Each piece is undefined when Baileys' default will do.
 */
export interface NetworkAgents {
  /** The WhatsApp Web websocket (a proxy only). */
  readonly agent: Agent | undefined
  /** Media uploads: Baileys calls `https.request` with it. */
  readonly fetchAgent: Agent | undefined
  /**
   * Media downloads, link previews and other `fetch` calls. `downloadMediaMessage` does not
   * read the socket's options: every download must be handed this dispatcher itself.
   */
  readonly dispatcher: Dispatcher | undefined
}

const none: NetworkAgents = { agent: undefined, fetchAgent: undefined, dispatcher: undefined }

const proxyAgents = (url: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => makeProxyAgents(url),
      catch: (error) =>
        new EngineError({
          code: "INVALID_PROXY",
          // InvalidProxyUrl carries the redacted URL only; anything else gets no detail.
          message: error instanceof InvalidProxyUrl ? error.message : `invalid proxy URL ${redactProxyUrl(url)}`,
          transient: false
        })
    }),
    (agents) => Effect.promise(() => closeProxyAgents(agents))
  )

const mediaCaAgents = (ca: string) =>
  Effect.acquireRelease(
    Effect.sync(() => ({ fetchAgent: new HttpsAgent({ ca }), dispatcher: new UndiciAgent({ connect: { ca } }) })),
    // Destroyed, not closed: a stop must not wait for a download still in flight.
    ({ dispatcher, fetchAgent }) =>
      Effect.promise(() => {
        fetchAgent.destroy()
        return dispatcher.destroy().catch(() => undefined)
      })
  )

/**
 * The agents of one connection, closed with its scope. With a proxy the extra CA is not
 * applied: the proxy's agents use the system's trust store, as for any real WhatsApp host.
 */
export const acquireNetworkAgents = (proxyUrl: Option.Option<string>, mediaCa: string | undefined) =>
  Option.match(proxyUrl, {
    onSome: (url) => Effect.map(proxyAgents(url), (agents): NetworkAgents => agents),
    onNone: () =>
      mediaCa === undefined
        ? Effect.succeed(none)
        : Effect.map(mediaCaAgents(mediaCa), (agents): NetworkAgents => ({ agent: undefined, ...agents }))
  })

/** The agents in `makeWASocket`'s terms. */
export const socketConfigOf = ({ agent, dispatcher, fetchAgent }: NetworkAgents): Partial<SocketConfig> => ({
  // agent-base agents are `http.Agent`s that speak TLS when the endpoint does, which is what
  // `ws` and `https.request` need; Baileys' types ask for `https.Agent`.
  ...(agent === undefined ? {} : { agent: agent as HttpsAgent }),
  ...(fetchAgent === undefined ? {} : { fetchAgent: fetchAgent as HttpsAgent }),
  ...(dispatcher === undefined ? {} : { options: fetchOptionsOf(dispatcher) })
})

/** Node's global fetch reads `dispatcher`; lib.dom's RequestInit does not know it. */
export const fetchOptionsOf = (dispatcher: Dispatcher | undefined): RequestInit =>
  (dispatcher === undefined ? {} : { dispatcher }) as unknown as RequestInit
