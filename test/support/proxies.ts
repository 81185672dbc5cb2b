import { once } from "node:events"
import * as http from "node:http"
import * as net from "node:net"

/**
 * Proxies on 127.0.0.1 for tests: an HTTP CONNECT proxy and a SOCKS5 proxy (RFC 1928 with
 * RFC 1929 username/password), each requiring the given credentials and recording what it
 * was offered and where it tunnelled to.
 */
export interface TestProxy {
  readonly port: number
  /** Credentials offered, in order (`Proxy-Authorization` header, or `user:pass` for SOCKS). */
  readonly offered: Array<string | undefined>
  /** `host:port` of every tunnel opened. */
  readonly tunnels: Array<string>
  readonly close: () => Promise<void>
}

const tunnel = (client: net.Socket, host: string, port: number, onOpen: () => void) => {
  const upstream = net.connect(port, host, () => {
    onOpen()
    upstream.pipe(client)
    client.pipe(upstream)
  })
  upstream.on("error", () => client.destroy())
  client.on("error", () => upstream.destroy())
}

const serve = async (server: net.Server, offered: TestProxy["offered"], tunnels: TestProxy["tunnels"]): Promise<TestProxy> => {
  const sockets = new Set<net.Socket>()
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return {
    port: (server.address() as net.AddressInfo).port,
    offered,
    tunnels,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

export const startConnectProxy = (credentials: { readonly user: string; readonly password: string }) => {
  const offered: TestProxy["offered"] = []
  const tunnels: TestProxy["tunnels"] = []
  const expected = `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString("base64")}`
  const server = http.createServer((_, res) => res.writeHead(405).end())
  server.on("connect", (req: http.IncomingMessage, client: net.Socket) => {
    const auth = req.headers["proxy-authorization"]
    offered.push(auth)
    if (auth !== expected) {
      client.end("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
      return
    }
    tunnels.push(req.url!)
    const [host, port] = req.url!.split(":")
    tunnel(client, host!, Number(port), () => client.write("HTTP/1.1 200 Connection Established\r\n\r\n"))
  })
  return serve(server, offered, tunnels)
}

export const startSocksProxy = (credentials: { readonly user: string; readonly password: string }) => {
  const offered: TestProxy["offered"] = []
  const tunnels: TestProxy["tunnels"] = []
  const server = net.createServer((client) => {
    client.on("error", () => undefined)
    let stage: "greeting" | "auth" | "request" = "greeting"
    client.on("data", (chunk: Buffer) => {
      if (stage === "greeting") {
        stage = "auth"
        client.write(Buffer.from([5, 2]))
      } else if (stage === "auth") {
        const user = chunk.subarray(2, 2 + chunk[1]!).toString()
        const passLength = chunk[2 + chunk[1]!]!
        const pass = chunk.subarray(3 + chunk[1]!, 3 + chunk[1]! + passLength).toString()
        offered.push(`${user}:${pass}`)
        const ok = user === credentials.user && pass === credentials.password
        client.write(Buffer.from([1, ok ? 0 : 1]))
        if (ok) stage = "request"
        else client.end()
      } else {
        client.removeAllListeners("data")
        const atyp = chunk[3]
        const host = atyp === 1 ? [...chunk.subarray(4, 8)].join(".") : chunk.subarray(5, 5 + chunk[4]!).toString()
        const port = chunk.readUInt16BE(chunk.length - 2)
        tunnels.push(`${host}:${port}`)
        tunnel(client, host, port, () => client.write(Buffer.from([5, 0, 0, 1, 127, 0, 0, 1, 0, 0])))
      }
    })
  })
  return serve(server, offered, tunnels)
}
