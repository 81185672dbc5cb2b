// The loopback receiver of `bench/webhooks.ts`, in its own process so that it takes no CPU
// from the gateway's event loop. Answers every POST 204 at once and notes when it arrived;
// tells the parent how many it has every 20 ms, and all arrivals when asked ("dump").
import * as http from "node:http"

/** [event id, arrival (ms, Date.now)]; an event received twice is noted twice. */
const arrivals = []
const server = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  let body = ""
  request.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => {
    arrivals.push([JSON.parse(body).id, Date.now()])
    response.writeHead(204).end()
  })
})
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }))
setInterval(() => process.send({ count: arrivals.length }), 20).unref()
process.on("message", (message) => {
  if (message === "dump") process.send({ arrivals })
  if (message === "reset") arrivals.length = 0
  if (message === "stop") server.close(() => process.exit(0))
})
