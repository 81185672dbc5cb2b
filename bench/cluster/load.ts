/**
 * The send load: CONNECTIONS keep-alive connections spread over the runners' APIs, each POSTing
 * send-text to the next session in turn until stopped. Every 2xx counts as accepted; the rate
 * and the latencies count only while `measure` is on (between warm-up and `stop`).
 */
import * as http from "node:http"
import { API_KEY, CONNECTIONS, SEND_BODY } from "./settings.js"

/** POST on the connection's one keep-alive socket; resolves with the status (0 on a socket error). */
const post = (agent: http.Agent, url: URL) =>
  new Promise<number>((resolve) => {
    const request = http.request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(SEND_BODY), "x-api-key": API_KEY }
    }, (response) => {
      response.resume()
      response.once("end", () => resolve(response.statusCode ?? 0))
      response.once("error", () => resolve(0))
    })
    request.setTimeout(10_000, () => request.destroy(new Error("timeout")))
    request.once("error", () => resolve(0))
    request.end(SEND_BODY)
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

export interface SendResults {
  /** 2xx per session, warm-up and the responses in flight at `stop` included. */
  readonly acceptedPerSession: ReadonlyArray<number>
  readonly accepted: number
  /** 2xx answered while measuring. */
  readonly measuredOk: number
  /** Latency percentiles while measuring, ms. */
  readonly p50: number
  readonly p99: number
  /** Refusals by "HTTP <status>" or "socket error/timeout". */
  readonly refused: Record<string, number>
}

/** Starts the load (in warm-up); `measure` starts the measured window, `stop` ends it and the load. */
export const startSendLoad = (bases: ReadonlyArray<string>, sessionIds: ReadonlyArray<string>) => {
  const acceptedPerSession = new Array<number>(sessionIds.length).fill(0)
  const refused: Record<string, number> = {}
  const latencies: Array<number> = []
  let measuredOk = 0
  let next = 0
  let phase: "warmup" | "measured" | "stopping" = "warmup"
  const routes = sessionIds.map((id) => `/api/sessions/${id}/messages/send-text`)
  const connection = async (c: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const base = bases[c % bases.length]!
    while (phase !== "stopping") {
      const session = next++ % sessionIds.length
      const sentAt = performance.now()
      const status = await post(agent, new URL(base + routes[session]!))
      if (status >= 200 && status < 300) {
        acceptedPerSession[session]!++
        if (phase === "measured") {
          measuredOk++
          latencies.push(performance.now() - sentAt)
        }
      } else {
        const key = status === 0 ? "socket error/timeout" : `HTTP ${status}`
        refused[key] = (refused[key] ?? 0) + 1
      }
    }
    agent.destroy()
  }
  const running = Promise.all(Array.from({ length: CONNECTIONS }, (_, c) => connection(c)))
  return {
    measure: () => void (phase = "measured"),
    /** Ends the window at once; resolves when the responses still in flight are in. */
    stop: async (): Promise<SendResults> => {
      phase = "stopping"
      await running
      const sorted = latencies.sort((a, b) => a - b)
      return {
        acceptedPerSession,
        accepted: acceptedPerSession.reduce((a, b) => a + b, 0),
        measuredOk,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        refused
      }
    }
  }
}
