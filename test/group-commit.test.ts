import { SqlClient } from "@effect/sql"
import { Data, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { RepositoriesLive, storeLayerFromUrl } from "../src/layers/store/index.js"
import { GroupCommit } from "../src/runtime/ports/store/GroupCommit.js"
import { SessionRepo, type SessionRow } from "../src/runtime/ports/store/SessionRepo.js"
import { Store } from "../src/runtime/ports/store/Store.js"
import { sessionRow } from "./support/fixtures.js"
import { countStatements } from "./support/statementLedger.js"
import { storeBackends } from "./support/storeBackends.js"

class Refused extends Data.TaggedError("Refused")<{}> {}

/** The ids of the sessions stored at `url`, read on a connection of its own (what another process would see). */
const storedIds = (url: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: string }>`SELECT id FROM sessions ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((row) => row.id)),
    Effect.provide(storeLayerFromUrl(url))
  )

const onStore = <A, E>(url: string, effect: Effect.Effect<A, E, GroupCommit | SessionRepo | Store>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, RepositoriesLive.pipe(Layer.provideMerge(storeLayerFromUrl(url))))) as Effect.Effect<A, E>)

/** Writes from callers that come at once: each caller's exit, in the callers' order. */
const writeTogether = (rows: ReadonlyArray<SessionRow>, refuse: (row: SessionRow) => boolean = () => false) =>
  Effect.gen(function*() {
    const groupCommit = yield* GroupCommit
    const sessions = yield* SessionRepo
    return yield* Effect.forEach(rows, (row) =>
      Effect.exit(groupCommit.write(Effect.gen(function*() {
        yield* sessions.insert(row)
        // Refused after its insert: the insert must not stay.
        if (refuse(row)) return yield* new Refused()
        return row.id
      }))), { concurrency: "unbounded" })
  })

for (const backend of storeBackends("group-commit.test.ts")) {
  describe.skipIf(backend.skip)(`GroupCommit on ${backend.name}`, () => {
    it("answers each caller once its write is committed: another connection sees it", async () => {
      const url = await Effect.runPromise(backend.freshUrl)
      const rows = Array.from({ length: 12 }, () => sessionRow())
      const seen = await onStore(url, Effect.gen(function*() {
        const exits = yield* writeTogether(rows)
        expect(exits.every(Exit.isSuccess)).toBe(true)
        return yield* storedIds(url)
      }))
      expect(seen).toEqual(rows.map((row) => row.id).sort())
    })

    it("a write that fails fails alone: its batch-mates are committed, its own change is not", async () => {
      const url = await Effect.runPromise(backend.freshUrl)
      const rows = Array.from({ length: 9 }, () => sessionRow())
      const refused = new Set([rows[2]!.id, rows[6]!.id])
      const exits = await onStore(url, writeTogether(rows, (row) => refused.has(row.id)))
      expect(exits.map((exit) => Exit.isSuccess(exit) ? "ok" : "refused")).toEqual(
        rows.map((row) => refused.has(row.id) ? "refused" : "ok")
      )
      const stored = await Effect.runPromise(storedIds(url))
      expect(stored).toEqual(rows.filter((row) => !refused.has(row.id)).map((row) => row.id).sort())
    })

    it("merges writes of one kind: one call for the batch's items, and a refused item fails alone", async () => {
      const url = await Effect.runPromise(backend.freshUrl)
      const rows = Array.from({ length: 12 }, () => sessionRow())
      const refused = rows[5]!.id
      const calls: Array<ReadonlyArray<string>> = []
      const exits = await onStore(url, Effect.gen(function*() {
        const groupCommit = yield* GroupCommit
        const sessions = yield* SessionRepo
        const writeAll = (batch: ReadonlyArray<SessionRow>) =>
          Effect.gen(function*() {
            calls.push(batch.map((row) => row.id))
            yield* Effect.forEach(batch, sessions.insert, { discard: true })
            if (batch.some((row) => row.id === refused)) return yield* new Refused()
          })
        return yield* Effect.forEach(rows, (row) => Effect.exit(groupCommit.writeMerged(writeAll, row)), { concurrency: "unbounded" })
      }))
      expect(exits.map((exit) => Exit.isSuccess(exit) ? "ok" : "refused")).toEqual(rows.map((row) => row.id === refused ? "refused" : "ok"))
      // The first call took several callers' items at once; after its refusal each went alone.
      expect(calls[0]!.length).toBeGreaterThan(1)
      expect(calls.slice(1).every((items) => items.length === 1)).toBe(true)
      expect(await Effect.runPromise(storedIds(url))).toEqual(rows.filter((row) => row.id !== refused).map((row) => row.id).sort())
    })

    it("runs what a write queued for after the commit once it is committed, and nothing of a refused one", async () => {
      const url = await Effect.runPromise(backend.freshUrl)
      const [kept, refused] = [sessionRow(), sessionRow()]
      const afterCommit: Array<{ readonly id: string; readonly visible: boolean }> = []
      await onStore(url, Effect.gen(function*() {
        const { afterCommit: whenCommitted } = yield* Store
        const groupCommit = yield* GroupCommit
        const sessions = yield* SessionRepo
        const write = (row: SessionRow, refuse: boolean) =>
          Effect.exit(groupCommit.write(Effect.gen(function*() {
            yield* sessions.insert(row)
            yield* whenCommitted(Effect.flatMap(Effect.orDie(storedIds(url)), (ids) =>
              Effect.sync(() => afterCommit.push({ id: row.id, visible: ids.includes(row.id) }))))
            if (refuse) return yield* new Refused()
          })))
        yield* Effect.all([write(kept, false), write(refused, true)], { concurrency: "unbounded" })
      }))
      expect(afterCommit).toEqual([{ id: kept.id, visible: true }])
    })
  })
}

describe("GroupCommit on SQLite, counted", () => {
  it("writes that come together share transactions", async () => {
    const url = await Effect.runPromise(storeBackends("group-commit.test.ts")[0]!.freshUrl)
    const rows = Array.from({ length: 20 }, () => sessionRow())
    const reading = await countStatements(() => onStore(url, Effect.asVoid(writeTogether(rows))))
    const begins = reading.bySql.find(([sql]) => sql === "BEGIN")?.[1] ?? 0
    expect(begins).toBeGreaterThan(0)
    expect(begins).toBeLessThan(rows.length / 4)
  })
})
