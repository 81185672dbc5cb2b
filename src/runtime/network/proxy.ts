import { redactProxyUrl } from "../../domain/Session.js"
import type { Agent } from "node:http"
import { type Socket } from "node:net"
import { HttpsProxyAgent } from "https-proxy-agent"
import { SocksProxyAgent } from "socks-proxy-agent"
import { Agent as UndiciAgent, buildConnector, type Dispatcher, ProxyAgent } from "undici"

/**
 * A session's proxy, applied to all three ways Baileys reaches the network (and to the link
 * previews the gateway fetches for it, with the dispatcher):
 * - `agent`: the WhatsApp Web websocket (`ws` takes a Node `http.Agent`);
 * - `fetchAgent`: media uploads (Baileys uses `https.request` with it on Node);
 * - `dispatcher`: downloads, link previews and other `fetch` calls (`options.dispatcher`).
 *
 * The dispatcher comes from `undici@6`, the major bundled in Node 20's global `fetch`: a
 * dispatcher of another major may speak an incompatible handler protocol.
 */

export interface ProxyAgents {
  readonly agent: Agent
  readonly fetchAgent: Agent
  readonly dispatcher: Dispatcher
}

export class InvalidProxyUrl extends Error {
  constructor(readonly redacted: string, reason: string) {
    super(`invalid proxy URL ${redacted}: ${reason}`)
  }
}

const socksProtocols = new Set(["socks5:", "socks5h:"])

const basicAuth = (url: URL): string | undefined =>
  url.username === "" && url.password === ""
    ? undefined
    : `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`

/**
 * undici 6 has no SOCKS support of its own: connect through the SOCKS agent, then let
 * undici's own connector do TLS over that socket (`httpSocket`), as its `ProxyAgent` does
 * for HTTP tunnels.
 */
const socksDispatcher = (socks: SocksProxyAgent): Dispatcher => {
  const tls = buildConnector({})
  return new UndiciAgent({
    connect: (options, callback) => {
      const port = Number(options.port) || (options.protocol === "https:" ? 443 : 80)
      // agent-base passes the request only to report events on it and to destroy it on failure.
      const request = { emit: () => false, destroy: () => undefined } as never
      socks.connect(request, { host: options.hostname, port, secureEndpoint: false }).then(
        (socket: Socket) =>
          options.protocol === "https:" ? tls({ ...options, httpSocket: socket }, callback) : callback(null, socket),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null)
      )
    }
  })
}

/** Builds the agents for a proxy URL; throws `InvalidProxyUrl` (with the URL redacted) if unusable. */
export const makeProxyAgents = (proxyUrl: string): ProxyAgents => {
  let url: URL
  try {
    url = new URL(proxyUrl)
  } catch {
    throw new InvalidProxyUrl(redactProxyUrl(proxyUrl), "not a URL")
  }
  if (url.protocol === "http:" || url.protocol === "https:") {
    // One agent for both: the websocket and uploads both tunnel with CONNECT.
    const agent = new HttpsProxyAgent(url)
    const token = basicAuth(url)
    const dispatcher = new ProxyAgent({ uri: url.toString(), ...(token === undefined ? {} : { token }) })
    return { agent, fetchAgent: agent, dispatcher }
  }
  if (socksProtocols.has(url.protocol)) {
    const agent = new SocksProxyAgent(url)
    return { agent, fetchAgent: agent, dispatcher: socksDispatcher(agent) }
  }
  throw new InvalidProxyUrl(redactProxyUrl(proxyUrl), `unsupported scheme ${url.protocol} (use http, https or socks5)`)
}

/** Releases the dispatcher's pooled connections and the agents' sockets when a connection ends. */
export const closeProxyAgents = async (agents: ProxyAgents): Promise<void> => {
  agents.agent.destroy()
  if (agents.fetchAgent !== agents.agent) agents.fetchAgent.destroy()
  await agents.dispatcher.close().catch(() => undefined)
}
