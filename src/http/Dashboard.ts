import { HttpServer } from "@effect/platform"
import { Console, Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Settings } from "../domain/Settings.js"
import { networkList } from "../domain/cidr.js"
import { clientAddress } from "./RequestTracking.js"

/**
 * The web dashboard on its own port (`DASHBOARD_PORT`): the files `npm run build` puts in
 * dist/dashboard, and `config.json`, which tells the page the API's port. The page calls the
 * API itself (which answers cross-origin requests), with the key the user signs in with, so
 * this server holds no secret and serves nothing a key would protect.
 */

/** dist/dashboard, from src/http (tests) or dist/http (the built gateway). */
export const dashboardDirectory = fileURLToPath(new URL("../../dist/dashboard/", import.meta.url))

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".woff2": "font/woff2"
}

const securityHeaders = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self' http: https:; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const send = (response: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": type, ...securityHeaders, ...extra })
  response.end(body)
}

const safePathname = (url: string | undefined) => {
  try {
    return decodeURIComponent(new URL(url ?? "/", "http://dashboard").pathname)
  } catch {
    return undefined
  }
}

const makeHandler = (settings: Settings, apiPort: number) => {
  const allowed = networkList(settings.security.allowedCidrs)
  const trusted = networkList(settings.security.trustedProxies)
  return async (request: IncomingMessage, response: ServerResponse) => {
    const caller = clientAddress(request.socket.remoteAddress ?? "unknown", request.headers["x-forwarded-for"]?.toString(), trusted)
    if (allowed.entries.length > 0 && !allowed.contains(caller)) return send(response, 403, "text/plain; charset=utf-8", "403 IP_NOT_ALLOWED\n")
    if (request.method !== "GET" && request.method !== "HEAD") return send(response, 405, "text/plain; charset=utf-8", "405\n", { allow: "GET, HEAD" })
    const pathname = safePathname(request.url)
    if (pathname === undefined) return send(response, 400, "text/plain; charset=utf-8", "400\n")
    if (pathname === "/config.json") {
      return send(response, 200, contentTypes[".json"]!, JSON.stringify({ apiPort }), { "cache-control": "no-store" })
    }
    // Only files under the directory; anything else (an unknown path, a hash route) is the app.
    const wanted = path.normalize(path.join(dashboardDirectory, pathname === "/" ? "index.html" : pathname))
    const file = wanted.startsWith(dashboardDirectory) ? wanted : path.join(dashboardDirectory, "index.html")
    const found = await fs.readFile(file).then((bytes) => ({ bytes, file }), () =>
      fs.readFile(path.join(dashboardDirectory, "index.html")).then((bytes) => ({ bytes, file: "index.html" }), () => undefined))
    if (found === undefined) {
      return send(response, 503, "text/plain; charset=utf-8", "the dashboard is not built: run `npm run build`\n")
    }
    const type = contentTypes[path.extname(found.file)] ?? "application/octet-stream"
    const cache = found.file.includes(`${path.sep}assets${path.sep}`) ? "public, max-age=31536000, immutable" : "no-cache"
    send(response, 200, type, request.method === "HEAD" ? "" : found.bytes, { "cache-control": cache })
  }
}

/**
 * The dashboard server for one scope, next to the API's `HttpServer` (whose bound port it tells
 * the page); nothing when `DASHBOARD_PORT` is 0. Prints where it listens.
 */
export const DashboardServerLive = (settings: Settings): Layer.Layer<never, never, HttpServer.HttpServer> =>
  settings.dashboardPort === 0
    ? Layer.empty
    : Layer.scopedDiscard(
      Effect.gen(function*() {
        const { address } = yield* HttpServer.HttpServer
        const handler = makeHandler(settings, address._tag === "TcpAddress" ? address.port : settings.port)
        const server = createServer((request, response) => {
          handler(request, response).catch(() => {
            if (!response.headersSent) send(response, 500, "text/plain; charset=utf-8", "500\n")
            else response.destroy()
          })
        })
        yield* Effect.acquireRelease(
          Effect.async<void, never>((resume) => {
            server.once("error", (error) => resume(Effect.die(error)))
            server.listen(settings.dashboardPort, settings.host, () => resume(Effect.void))
          }),
          () => Effect.async<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
        )
        const { port } = server.address() as AddressInfo
        yield* Console.log(`Switchboard dashboard on http://${settings.host}:${port}/`)
      })
    )
