/** The gateway's REST API as the benchmark calls it: JSON requests, sessions created and waited for. */
import { setTimeout as sleep } from "node:timers/promises"
import { API_KEY, since } from "./settings.js"

const api = async (base: string, method: string, route: string, body?: unknown) => {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: { accept: "application/json", "content-type": "application/json", "x-api-key": API_KEY },
    body: body === undefined ? null : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await res.text()
  if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${route} → HTTP ${res.status}: ${text.slice(0, 400)}`)
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** `data.pagination.total` of a list. */
export const total = async (base: string, route: string): Promise<number> => {
  const json = await api(base, "GET", route)
  const value = json?.data?.pagination?.total
  if (typeof value !== "number") throw new Error(`GET ${route}: no data.pagination.total in ${JSON.stringify(json).slice(0, 300)}`)
  return value
}

/** `count` sessions with `autoStart: true`, all at once, round-robin over the APIs; their ids. */
export const createSessions = (bases: ReadonlyArray<string>, count: number): Promise<Array<string>> =>
  Promise.all(Array.from({ length: count }, async (_, i) => {
    const session = await api(bases[i % bases.length]!, "POST", "/api/sessions", { name: `bench-${i + 1}`, autoStart: true })
    if (typeof session?.id !== "string") throw new Error(`POST /api/sessions returned no id: ${JSON.stringify(session)}`)
    return session.id as string
  }))

/** Polls until `count` sessions are ready; fails when one failed or after 120 s from `createdAt`. */
export const waitUntilReady = async (base: string, count: number, createdAt: number) => {
  for (;;) {
    const ready = await total(base, "/api/sessions?status=ready&limit=1")
    if (ready >= count) return
    const failed = await total(base, "/api/sessions?status=failed&limit=1")
    if (failed > 0 || since(createdAt) > 120) {
      throw new Error(`${ready} of ${count} sessions ready, ${failed} failed, ${since(createdAt).toFixed(1)} s after they were created`)
    }
    await sleep(50)
  }
}
