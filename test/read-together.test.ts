import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer } from "effect"
import * as path from "node:path"
import { SqliteStoreLive } from "../src/layers/store/SqliteStore.js"
import { readTogether } from "../src/layers/store/readTogether.js"
import { tempDir } from "./support/gateway.js"

/**
 * Reads by key that arrive together share one query (`readTogether`: a restore's thousands of
 * sessions reading their unsent messages and credentials as they start), on a real SQLite file.
 */
const store = () => SqliteStoreLive(path.join(tempDir("read-together"), "store.db"))

const setUp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE things (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
  yield* sql`INSERT INTO things (key, value) VALUES ('a', 'A'), ('b', 'B'), ('c', 'C')`
  const queries: Array<ReadonlyArray<string>> = []
  const read = yield* readTogether({
    readMany: (keys: ReadonlyArray<string>) => {
      queries.push(keys)
      return sql<{ key: string; value: string }>`SELECT key, value FROM things WHERE key IN ${sql.in(keys)}`.pipe(
        Effect.map((rows) => new Map(rows.map((row) => [row.key, row.value] as const)))
      )
    },
    absent: "none",
    maxKeys: 2
  })
  return { sql, queries, read }
})

describe("reads that arrive together", () => {
  it.scoped("share a query, each caller getting its own key's value (or the absent one)", () =>
    Effect.gen(function*() {
      const { queries, read } = yield* setUp
      const values = yield* Effect.all([read("a"), read("b"), read("a"), read("zz"), read("c")], { concurrency: "unbounded" })
      expect(values).toEqual(["A", "B", "A", "none", "C"])
      // five reads in one turn, two keys a query at most: three queries, not five
      expect(queries).toEqual([["a", "b"], ["a", "zz"], ["c"]])
    }).pipe(Effect.provide(Layer.orDie(store()))))

  it.scoped("inside a transaction a read goes alone, in it (a batch would wait for the connection the transaction holds)", () =>
    Effect.gen(function*() {
      const { queries, read, sql } = yield* setUp
      const value = yield* sql.withTransaction(Effect.zipRight(sql`UPDATE things SET value = 'A2' WHERE key = 'a'`, read("a")))
      expect(value).toBe("A2")
      expect(queries).toEqual([["a"]])
    }).pipe(Effect.provide(Layer.orDie(store()))))

  it.scoped("a failed query fails every read that shared it", () =>
    Effect.gen(function*() {
      const { read, sql } = yield* setUp
      yield* sql`DROP TABLE things`
      const results = yield* Effect.all([Effect.either(read("a")), Effect.either(read("b"))], { concurrency: "unbounded" })
      expect(results.map(Either.isLeft)).toEqual([true, true])
    }).pipe(Effect.provide(Layer.orDie(store()))))
})
