import { SqlClient } from "@effect/sql"
import { Effect, Logger } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { storeLayerFromUrl } from "../src/layers/store/index.js"
import { startCheckpointThread } from "../src/layers/store/walCheckpointer.js"
import { eventually, readySession, TEST_KEY, tempDir, type TestGateway } from "./support/gateway.js"
import { useGatewayProcesses } from "./support/process.js"

/**
 * SQLite's checkpoints run on a thread of their own (src/layers/store/walCheckpointer.ts): the
 * gateway's connection, whose checkpoints would stop the event loop, only checkpoints past
 * 10,000 WAL pages (~40 MB). So the database file itself taking the WAL's pages while a few MB
 * are written is the thread's doing.
 */
const fileSize = (file: string) => fs.existsSync(file) ? fs.statSync(file).size : 0

describe("SQLite checkpoints on a thread of their own", () => {
  it("moves the WAL's pages into the database file while the store runs, and folds the rest in at close", async () => {
    const file = path.join(tempDir("switchboard-wal-"), "store.db")
    const store = storeLayerFromUrl(`sqlite:${file}`)
    const sizes = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, note TEXT NOT NULL)`
      const before = fileSize(file)
      // ~4 MB in 200 commits, as a gateway's group commits come.
      for (let commit = 0; commit < 200; commit++) {
        yield* sql.withTransaction(sql`INSERT INTO notes ${
          sql.insert(Array.from({ length: 10 }, (_, n) => ({ id: commit * 10 + n, note: `${commit}:${n}:`.padEnd(2_000, "x") })))
        }`)
      }
      const during = yield* Effect.promise(() => eventually(async () => fileSize(file), (size) => size > before + 3_000_000, 15_000))
      return { before, during }
    }).pipe(Effect.provide(store)))
    expect(sizes.during - sizes.before).toBeGreaterThan(3_000_000)
    // Closed: everything is in the database file, the WAL is empty, and the data reads back.
    expect(fileSize(`${file}-wal`)).toBe(0)
    const count = await Effect.runPromise(Effect.scoped(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT COUNT(*) AS n FROM notes`).pipe(Effect.provide(store))))
    expect(count).toEqual([{ n: 2_000 }])
  }, 30_000)

  it("says so when the thread fails, and a store closing then does not wait for it", async () => {
    const dir = tempDir("switchboard-wal-failed-")
    const logged: Array<string> = []
    const logger = Logger.make(({ message }) => logged.push(String(message)))
    let closing = 0
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      // A driver that is not there: the thread fails as it starts.
      yield* startCheckpointThread(path.join(dir, "store.db"), path.join(dir, "no-such-driver.js"))
      yield* Effect.promise(() => eventually(async () => logged.length, (n) => n > 0, 5_000))
      closing = Date.now()
    })).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))))
    expect(logged.some((line) => line.includes("SQLite checkpoint thread failed"))).toBe(true)
    // Closing waits for no exit that already happened (it waited forever before, then 2 s at most).
    expect(Date.now() - closing).toBeLessThan(1_500)
  }, 15_000)

  const spawnGateway = useGatewayProcesses()

  it("loses no accepted message on kill -9 once the WAL's pages are being checkpointed", async () => {
    const dataDir = tempDir("switchboard-wal-kill-")
    const database = path.join(dataDir, "switchboard.db")
    const env = { API_KEY: TEST_KEY, SEND_RATE_PER_MINUTE: "0", RATE_LIMIT_PER_MINUTE: "0", OUTBOUND_BACKLOG_MAX: "0" }
    const first = await spawnGateway({ dataDir, env })
    const { id: sessionId } = await readySession({ call: first.call } as Pick<TestGateway, "call"> as TestGateway, "wal")
    const accepted: Array<string> = []
    let sending = true
    const sender = async (lane: number) => {
      for (let n = 0; sending; n++) {
        const response = await first.call("POST", `/api/sessions/${sessionId}/messages/send-text`, {
          body: { chatId: "447700900123@c.us", text: `lane ${lane} message ${n} `.padEnd(400, "x") }
        }).catch(() => undefined)
        if (response?.status === 201) accepted.push(response.body.messageId)
      }
    }
    const senders = Array.from({ length: 8 }, (_, lane) => sender(lane))
    const empty = fileSize(database)
    // Pages copied into the database file (by the thread, as the test above shows): then the kill.
    await eventually(async () => fileSize(database), (size) => size > empty + 1_000_000, 20_000)
    first.signal("SIGKILL")
    sending = false
    await Promise.all(senders)
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" })
    expect(accepted.length).toBeGreaterThan(100)

    const second = await spawnGateway({ dataDir, env })
    const stored = new Set<string>()
    for (let page = 1; ; page++) {
      const response = await second.call("GET", `/api/sessions/${sessionId}/messages?direction=out&limit=100&page=${page}`)
      for (const message of response.body.data.items) stored.add(message.id)
      if (response.body.data.items.length < 100) break
    }
    expect(accepted.filter((id) => !stored.has(id))).toEqual([])
    second.signal("SIGKILL")
    await second.exited
  }, 60_000)
})
