// Reference server 1, the floor a JSON POST costs on this machine: node:http parsing the
// send-text body and answering 201 with a body shaped like the gateway's, nothing else.
// Run by the benchmarks as a process of its own (`node bench/reference/node-http.mjs`); it
// listens on a port of the system's choosing and prints `Listening on http://127.0.0.1:<port>`.
import { randomUUID } from "node:crypto"
import * as http from "node:http"

const send = (res, status, body) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const server = http.createServer((req, res) => {
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

server.listen(0, "127.0.0.1", () => console.log(`Listening on http://127.0.0.1:${server.address().port}`))
process.once("SIGTERM", () => server.close(() => process.exit(0)))
