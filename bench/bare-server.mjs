// The floor a JSON POST costs on this machine: node:http parsing the send-text body and
// answering 201 with a body shaped like the gateway's, nothing else.
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"

const send = (res, status, body) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const createServer = () =>
  http.createServer((req, res) => {
    if (req.method !== "POST") return send(res, 405, { error: "method not allowed" })
    const chunks = []
    req.on("data", (c) => chunks.push(c))
    req.on("end", () => {
      let body
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      } catch {
        return send(res, 400, { error: "invalid JSON" })
      }
      if (typeof body?.chatId !== "string" || typeof body?.text !== "string") {
        return send(res, 400, { error: "chatId and text must be strings" })
      }
      send(res, 201, { messageId: randomUUID(), chatId: body.chatId, status: "pending", timestamp: new Date().toISOString() })
    })
  })

const listen = (server) =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve(server.address().port))
  })

// This module is also the worker's script: serve, and tell the parent the port.
if (!isMainThread && workerData === "bare-server") parentPort.postMessage(await listen(createServer()))

/**
 * Starts the bare server on a worker thread of this process ("worker": its own event loop, like
 * the gateway has its own process) or on this thread ("inline": sharing the event loop with
 * autocannon). Resolves with its URL and a stop function.
 */
export const startBare = async (mode) => {
  if (mode === "inline") {
    const server = createServer()
    const port = await listen(server)
    const stop = () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
    return { url: `http://127.0.0.1:${port}`, stop }
  }
  const worker = new Worker(new URL(import.meta.url), { workerData: "bare-server" })
  const port = await new Promise((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
    worker.once("exit", (code) => reject(new Error(`bare server worker exited (code ${code})`)))
  })
  return { url: `http://127.0.0.1:${port}`, stop: () => worker.terminate() }
}
