import { Effect, Exit, Scope } from "effect"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { eventually, startGateway, tempDir } from "./support/gateway.js"
import { countStatements, perUnitTable, uncountedGet } from "./support/statementLedger.js"

/**
 * What bringing running sessions back costs in SQL statements (issue 19, start-up at scale):
 * a gateway in-process on a real SQLite file with the sandbox engine is closed with its
 * sessions ready, and a second one on the same file restores them; its statements are counted
 * from its start until every session is `ready` again (watched with uncounted reads).
 *
 * Before (main at 6181f2f): 18.4 per session: three reads of its row, three transactions (one
 * with a SAVEPOINT), two event inserts, a webhook fan-out pass of its own, and the Ready write
 * of phone/name/lid that had not changed. Then ~5.3: its unsent messages, its row, its
 * credentials, and its status with its event, group committed with other sessions'. Now ~4.4:
 * the actor connects with the row the restore read, and Ready compares with that row (before,
 * the link read it again). Now ~2.5: the unsent messages and the credentials of the sessions
 * that start together are one query each (`readTogether`), not one per session. The rest
 * (migrations, the sandbox ledger, the outbox) is the same for any number.
 */
const SESSIONS = 100
const PER_SESSION_CEILING = 3

const readyCount = (dataDir: string) =>
  uncountedGet<{ n: number }>(path.join(dataDir, "switchboard.db"), "SELECT count(*) AS n FROM sessions WHERE status = 'ready'").n

/** Sessions announced `ready` since `since` (an ISO time): the stored status says so before the restore has begun too. */
const readySince = (dataDir: string, since: string) =>
  uncountedGet<{ n: number }>(
    path.join(dataDir, "switchboard.db"),
    "SELECT count(DISTINCT session_id) AS n FROM events WHERE kind = 'session.status' AND at >= ? AND json_extract(data, '$.status') = 'ready'",
    since
  ).n

describe(`restoring ${SESSIONS} running sandbox sessions`, () => {
  it("costs a few statements per session", async () => {
    const dataDir = tempDir("switchboard-restore-cost-")
    const first = await Effect.runPromise(Scope.make())
    const gateway = await Effect.runPromise(Scope.extend(startGateway({ dataDir }), first))
    for (let i = 0; i < SESSIONS; i++) {
      const created = await gateway.call("POST", "/api/sessions", { body: { name: `restored-${i}`, autoStart: true } })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
    }
    await eventually(async () => readyCount(dataDir), (ready) => ready === SESSIONS, 60_000)
    // Closed with its sessions running: they want to run, and the next gateway brings them back.
    await Effect.runPromise(Scope.close(first, Exit.void))

    const second = await Effect.runPromise(Scope.make())
    try {
      const reading = await countStatements(async () => {
        const since = new Date().toISOString()
        const restarted = await Effect.runPromise(Scope.extend(startGateway({ dataDir }), second))
        await eventually(async () => readySince(dataDir, since), (ready) => ready === SESSIONS, 60_000)
        const listed = await restarted.call("GET", "/api/sessions?status=ready&limit=1&page=1")
        expect(listed.body.data.pagination.total).toBe(SESSIONS)
      })
      console.log(perUnitTable("restore", reading, SESSIONS))
      expect(reading.total / SESSIONS).toBeLessThanOrEqual(PER_SESSION_CEILING)
    } finally {
      await Effect.runPromise(Scope.close(second, Exit.void))
    }
  }, 180_000)
})
