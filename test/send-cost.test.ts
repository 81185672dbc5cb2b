import { Effect } from "effect"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { eventually, readySession, useGateway } from "./support/gateway.js"
import { countStatements, perUnitTable, queryPlans, uncountedGet } from "./support/statementLedger.js"

/**
 * What a send-text costs in SQL statements (issue 19): the gateway in-process on a real SQLite
 * file with the sandbox engine, better-sqlite3's statements counted by their text. Counted
 * twice: the accept path alone (the session is away, so nothing goes out), and a message's
 * whole life (accepted, sent, delivered, read by an echo contact, whose reply comes in too).
 *
 * Before issue 19 (main at f07ec05), ten callers at once: accept 8.3 per send (BEGIN, COMMIT,
 * session, block check, message, status history, chat, audit), whole life 79.4 per send.
 * After (group commit of accepted sends and audit records, the row carried to the lane,
 * receipts moving their message in one go, session and block flag cached): accept 5.0–5.4,
 * whole life 60. Of the whole life, about 7 are the outbox's (fan-out to webhooks, marking
 * dispatched), which varies with the timing of its loop, and 12 the sandbox network's own
 * ledger (what it holds for each session).
 * Second round (main at 557a0f1 → i19-sent-row): a receipt is one UPDATE … RETURNING from the
 * status it usually follows (no read first), `message.sent` is built from that row (not the
 * message reloaded with its children), the events of one status change are one INSERT, and the
 * sandbox ledger writes a sent record once and no row for a `sent` receipt taken at once:
 * accept 5.0–5.1 (unchanged), whole life 60 → 45. To a chat nobody answers (pending → sent
 * only; `node exp2.mjs` in /work/tools/i19): 20.5 → 12.2.
 * Third round (f17c327 → the eighth round of bench/README.md): the sandbox network's records
 * and the audit records in batches, accepted rows and their history in one INSERT each per
 * group commit (`GroupCommit.writeMerged`), one chat write per chat, receipts group committed:
 * accept 5.0 → 3.3–3.8, whole life 45 → 30–32.
 */
const SENDS = 40
const ECHO_CHAT = "15550009999@c.us"

const gateway = useGateway()

const dbFile = () => path.join(gateway().settings.dataDir, "switchboard.db")

/** Callers sending at once, as under load: writes that arrive together may share a commit. */
const CONCURRENCY = 10

const sendTexts = async (sessionId: string, count: number) => {
  for (let start = 0; start < count; start += CONCURRENCY) {
    const wave = Array.from({ length: Math.min(CONCURRENCY, count - start) }, (_, i) =>
      gateway().call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: ECHO_CHAT, text: `cost ${start + i}` } }))
    for (const sent of await Promise.all(wave)) expect(sent.status).toBe(201)
  }
}

const countWhere = (sql: string, ...params: Array<unknown>) => uncountedGet<{ n: number }>(dbFile(), sql, ...params).n

describe("the SQL cost of a send-text", () => {
  it("accepting a send costs few statements", async () => {
    const session = await readySession(gateway(), "cost-accept")
    const { network } = gateway()
    // The session goes away for the count, so its lane sends nothing meanwhile.
    await Effect.runPromise(network.refuseConnections(session.id, "60 seconds"))
    await Effect.runPromise(network.dropConnection(session.id))
    await eventually(() => gateway().call("GET", `/api/sessions/${session.id}`), (r) => r.body.status === "disconnected")
    await sendTexts(session.id, 3) // warm the prepared statements and caches
    const reading = await countStatements(() => sendTexts(session.id, SENDS))
    console.log(perUnitTable("accept path", reading, SENDS))
    expect(reading.total / SENDS).toBeLessThanOrEqual(ACCEPT_CEILING)
  })

  it("a message's whole life (accepted, sent, delivered, read, answered) costs few statements", async () => {
    const session = await readySession(gateway(), "cost-life")
    await sendTexts(session.id, 3)
    await eventually(async () => countWhere("SELECT count(*) AS n FROM messages WHERE session_id = ? AND status = 'read'", session.id), (n) => n === 3)
    const reading = await countStatements(async () => {
      await sendTexts(session.id, SENDS)
      // Every message read by the echo contact, and every echo stored as received.
      await eventually(
        async () => ({
          read: countWhere("SELECT count(*) AS n FROM messages WHERE session_id = ? AND from_me = 1 AND status = 'read'", session.id),
          replies: countWhere("SELECT count(*) AS n FROM messages WHERE session_id = ? AND from_me = 0", session.id)
        }),
        ({ read, replies }) => read === SENDS + 3 && replies === SENDS + 3,
        20_000
      )
    })
    console.log(perUnitTable("whole life", reading, SENDS))
    expect(reading.total / SENDS).toBeLessThanOrEqual(LIFE_CEILING)
    // No statement of a message's life walks a session's messages: the receipts' UPDATE once did
    // (SQLite took the (session_id, status) index over the engine ids, so each run of receipts
    // read every message of the session in the status it moved from, and cost more the more
    // messages had stopped there). Neither a scan of the table nor a search on the session
    // alone, nor through that index.
    const walking = queryPlans(dbFile(), reading.statements).filter(({ plan }) =>
      plan.split(" | ").some((step) =>
        /^SCAN messages\b/.test(step) || step.includes("messages_session_status_idx") ||
        /^SEARCH messages USING (COVERING )?INDEX \w+ \(session_id=\?\)/.test(step)))
    expect(walking).toEqual([])
  })
})

/** Statements per send on the accept path: the figure after issue 19 plus a margin for how callers share batches. */
const ACCEPT_CEILING = 4.5
/** Statements per send over its whole life: the figure after issue 19 plus a margin for the outbox's timing. */
const LIFE_CEILING = 36
