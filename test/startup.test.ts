import { describe, expect, it } from "vitest"
import { eventually, TEST_KEY, tempDir } from "./support/gateway.js"
import { type GatewayProcess, useGatewayProcesses } from "./support/process.js"

/**
 * A gateway restarted with a few hundred running sandbox sessions (`node dist/bundle/main.js`, one
 * SQLite file): it listens first and brings the sessions back in the background, answering
 * meanwhile. How fast is for `npm run bench:startup`; here only what happens in which order.
 */

const spawnGateway = useGatewayProcesses()
const SESSIONS = 300
// Starting alone takes ~1 s; on a loaded 2-core machine it has taken over 20 s.
const startTimeoutMs = 60_000

const readyCount = async (gateway: GatewayProcess) => {
  const response = await gateway.call("GET", "/api/sessions?status=ready&limit=1&page=1")
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body.data.pagination.total as number
}

/** Runs `task` for every item, `width` at a time. */
const inPool = async <A>(items: ReadonlyArray<A>, width: number, task: (item: A) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await task(items[next++]!)
  }))
}

describe(`a restart with ${SESSIONS} running sandbox sessions`, () => {
  it("answers health, reads and sends while the sessions are still being restored, then has them all ready", async () => {
    const dataDir = tempDir("switchboard-startup-")
    const first = await spawnGateway({ dataDir, env: { API_KEY: TEST_KEY, HISTORY_SYNC: "off" }, startTimeoutMs })
    const ids: Array<string> = []
    await inPool(Array.from({ length: SESSIONS }, (_, i) => `restored-${i}`), 8, async (name) => {
      const created = await first.call("POST", "/api/sessions", { body: { name, autoStart: true } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      ids.push(created.body.id as string)
    })
    await eventually(() => readyCount(first), (ready) => ready === SESSIONS, 120_000)
    const phones = new Map<string, string>()
    for (const id of [ids[0]!, ids[ids.length - 1]!]) phones.set(id, (await first.call("GET", `/api/sessions/${id}`)).body.phone)
    first.signal("SIGTERM")
    expect(await first.exited).toEqual({ code: 0, signal: null })

    // With SANDBOX_PAIR_DELAY_MS=0 a session that had to link again would stay at qr_ready.
    const second = await spawnGateway({ dataDir, env: { API_KEY: TEST_KEY, SANDBOX_PAIR_DELAY_MS: "0" }, startTimeoutMs })
    const health = await second.call("GET", "/api/health", { key: null })
    const readyWhenHealthAnswered = await readyCount(second)
    expect(health.status).toBe(200)
    expect(health.body).toMatchObject({ status: "ok", checks: { database: "ok" } })
    // Answered before the restore was over: some sessions are not back yet.
    expect(health.body.sessions.restoring).toBeGreaterThan(0)
    expect(readyWhenHealthAnswered).toBeLessThan(SESSIONS)

    // A send to a session that may not be back yet is accepted, and goes out once both are ready.
    const [sender, recipient] = [ids[ids.length - 1]!, ids[0]!]
    const sent = await second.call("POST", `/api/sessions/${sender}/messages/send-text`, {
      body: { chatId: phones.get(recipient), text: "sent while restoring" }
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(201)

    await eventually(() => readyCount(second), (ready) => ready === SESSIONS, 120_000)
    await eventually(() => second.call("GET", "/api/health", { key: null }), (r) => r.body.sessions.restoring === 0, 10_000)
    expect(await second.call("GET", "/api/sessions?status=qr_ready&limit=1&page=1").then((r) => r.body.data.pagination.total)).toBe(0)
    await eventually(
      () => second.call("GET", `/api/sessions/${sender}/messages/${sent.body.messageId}`).then((r) => r.body.status as string),
      (status) => status === "delivered",
      30_000
    )
    second.signal("SIGTERM")
    expect(await second.exited).toEqual({ code: 0, signal: null })
  }, 400_000)
})
