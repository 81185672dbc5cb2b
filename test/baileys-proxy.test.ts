import { HttpsProxyAgent } from "https-proxy-agent"
import { once } from "node:events"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Agent } from "node:http"
import * as net from "node:net"
import { SocksProxyAgent } from "socks-proxy-agent"
import { Agent as UndiciAgent, type Dispatcher, ProxyAgent } from "undici"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closeProxyAgents, InvalidProxyUrl, makeProxyAgents } from "../src/runtime/network/proxy.js"
import { redactProxyUrl as redactProxy } from "../src/domain/Session.js"
import { startConnectProxy, startSocksProxy, type TestProxy } from "./support/proxies.js"

/** Everything runs on 127.0.0.1: a target HTTP server, and proxies that require credentials. */
const servers: Array<net.Server> = []
let targetPort = 0
let tlsTargetPort = 0
let httpProxy: TestProxy
let socksProxy: TestProxy
let httpProxyPort = 0
let socksProxyPort = 0
const seen = {
  get httpAuth() {
    return httpProxy.offered
  },
  get socksAuth() {
    return socksProxy.offered
  }
}

/** A self-signed certificate for the TLS target, if openssl is at hand. */
const selfSigned = (() => {
  try {
    const dir = mkdtempSync(join(tmpdir(), "switchboard-proxy-tls-"))
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")
    ], { stdio: "ignore" })
    return { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }
  } catch {
    return null
  }
})()

const listen = async (server: net.Server) => {
  servers.push(server)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return (server.address() as net.AddressInfo).port
}

beforeAll(async () => {
  targetPort = await listen(http.createServer((req, res) => res.end(`hello via ${req.url}`)))
  httpProxy = await startConnectProxy({ user: "alice", password: "s3cr3t/p@ss" })
  socksProxy = await startSocksProxy({ user: "bob", password: "hunter2" })
  httpProxyPort = httpProxy.port
  socksProxyPort = socksProxy.port
  if (selfSigned !== null) tlsTargetPort = await listen(https.createServer(selfSigned, (_, res) => res.end("tls hello")))
})

afterAll(async () => {
  for (const server of servers) server.close()
  await Promise.all([httpProxy.close(), socksProxy.close()])
})

const getVia = (agent: Agent, path: string) =>
  new Promise<string>((resolve, reject) => {
    http.get({ host: "127.0.0.1", port: targetPort, path, agent }, (res) => {
      let body = ""
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () => resolve(`${res.statusCode} ${body}`))
    }).on("error", reject)
  })

const fetchVia = async (dispatcher: Dispatcher, path: string) => {
  const response = await fetch(`http://127.0.0.1:${targetPort}${path}`, { dispatcher } as unknown as RequestInit)
  return response.text()
}

describe("Baileys proxy agents", () => {
  it("builds agents of the right class for each scheme", () => {
    const http1 = makeProxyAgents("http://alice:pw@proxy.example:3128")
    expect(http1.agent).toBeInstanceOf(HttpsProxyAgent)
    expect(http1.fetchAgent).toBeInstanceOf(HttpsProxyAgent)
    expect(http1.dispatcher).toBeInstanceOf(ProxyAgent)

    const tls = makeProxyAgents("https://alice:pw@proxy.example:443")
    expect(tls.agent).toBeInstanceOf(HttpsProxyAgent)
    expect((tls.agent as HttpsProxyAgent<string>).proxy.protocol).toBe("https:")
    expect(tls.dispatcher).toBeInstanceOf(ProxyAgent)

    const socks = makeProxyAgents("socks5://bob:hunter2@proxy.example:1080")
    expect(socks.agent).toBeInstanceOf(SocksProxyAgent)
    expect(socks.fetchAgent).toBeInstanceOf(SocksProxyAgent)
    expect(socks.dispatcher).toBeInstanceOf(UndiciAgent)
    const proxy = (socks.agent as SocksProxyAgent).proxy
    expect([proxy.type, proxy.host, proxy.port, proxy.userId, proxy.password]).toEqual([5, "proxy.example", 1080, "bob", "hunter2"])
  })

  it("refuses other schemes and garbage without echoing the password", () => {
    expect(() => makeProxyAgents("ftp://u:topsecret@host:21")).toThrow(InvalidProxyUrl)
    expect(() => makeProxyAgents("ftp://u:topsecret@host:21")).not.toThrow(/topsecret/)
    expect(() => makeProxyAgents("not a url topsecret")).toThrow(InvalidProxyUrl)
    expect(() => makeProxyAgents("not a url topsecret")).not.toThrow(/topsecret/)
  })

  it("http proxy: the websocket/upload agent and the fetch dispatcher tunnel with the credentials", async () => {
    // Percent-encoded characters in the password are decoded before they are sent.
    const agents = makeProxyAgents(`http://alice:s3cr3t%2Fp%40ss@127.0.0.1:${httpProxyPort}`)
    seen.httpAuth.length = 0
    expect(await getVia(agents.agent, "/agent")).toBe("200 hello via /agent")
    expect(await fetchVia(agents.dispatcher, "/dispatcher")).toBe("hello via /dispatcher")
    const expected = `Basic ${Buffer.from("alice:s3cr3t/p@ss").toString("base64")}`
    expect(seen.httpAuth).toEqual([expected, expected])
    await closeProxyAgents(agents)
  })

  it("http proxy: wrong credentials are refused (the proxy really checks)", async () => {
    const agents = makeProxyAgents(`http://alice:wrong@127.0.0.1:${httpProxyPort}`)
    // https-proxy-agent hands a refused CONNECT's response to the request instead of throwing.
    expect(await getVia(agents.agent, "/agent")).toBe("407 ")
    await expect(fetchVia(agents.dispatcher, "/dispatcher")).rejects.toThrow()
    await closeProxyAgents(agents)
  })

  it("socks5 proxy: the agent and the (undici 6) dispatcher connect with the credentials", async () => {
    const agents = makeProxyAgents(`socks5://bob:hunter2@127.0.0.1:${socksProxyPort}`)
    seen.socksAuth.length = 0
    expect(await getVia(agents.agent, "/socks-agent")).toBe("200 hello via /socks-agent")
    expect(await fetchVia(agents.dispatcher, "/socks-dispatcher")).toBe("hello via /socks-dispatcher")
    expect(seen.socksAuth).toEqual(["bob:hunter2", "bob:hunter2"])
    await closeProxyAgents(agents)
  })

  it.skipIf(selfSigned === null)("https downloads: TLS to the target runs inside the tunnel (both dispatchers)", async () => {
    for (const url of [`socks5://bob:hunter2@127.0.0.1:${socksProxyPort}`, `http://alice:s3cr3t%2Fp%40ss@127.0.0.1:${httpProxyPort}`]) {
      const agents = makeProxyAgents(url)
      // The target's self-signed certificate reaching the client proves the handshake went
      // through the proxy to the target (the proxies speak no TLS themselves).
      const error = await fetch(`https://localhost:${tlsTargetPort}/`, { dispatcher: agents.dispatcher } as unknown as RequestInit)
        .then(() => null, (e: unknown) => e as { cause?: { code?: string } })
      expect(error?.cause?.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT")
      await closeProxyAgents(agents)
    }
  })

  it("socks5 proxy: wrong credentials fail the request", async () => {
    const agents = makeProxyAgents(`socks5://bob:nope@127.0.0.1:${socksProxyPort}`)
    await expect(fetchVia(agents.dispatcher, "/x")).rejects.toThrow()
    await closeProxyAgents(agents)
  })

  it("redactProxy hides the password and only the password", () => {
    expect(redactProxy("http://alice:s3cr3t@proxy.example:3128")).toBe("http://alice:***@proxy.example:3128")
    expect(redactProxy("socks5://bob:hunter2@127.0.0.1:1080")).toBe("socks5://bob:***@127.0.0.1:1080")
    expect(redactProxy("https://proxy.example:443/")).toBe("https://proxy.example/")
    expect(redactProxy("http://alice@proxy.example:3128")).toBe("http://alice@proxy.example:3128")
    expect(redactProxy("http://proxy.example:3128")).toBe("http://proxy.example:3128")
    expect(redactProxy("::not a url with hunter2")).toBe("***")
    for (const url of ["http://a:p%40ss@h:1", "socks5://u:hunter2@h:1080"]) {
      expect(redactProxy(url)).not.toMatch(/p%40ss|hunter2/)
    }
  })
})
