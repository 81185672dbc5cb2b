import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { storeBackends } from "./support/storeBackends.js"

/**
 * The Store's client runs a statement inside a transaction straight on the transaction's
 * connection (src/layers/store/directStatements.ts). What a repository relies on must hold
 * either way: a transaction's statements see each other and go or stay together, a failing
 * statement fails as an SqlError, statements nest as fragments, and identifiers still work.
 */
for (const backend of storeBackends("direct-statements.test.ts")) {
  describe.skipIf(backend.skip)(`the Store's SqlClient (${backend.name})`, () => {
    const run = <A, E>(body: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
      Effect.runPromise(
        Effect.scoped(Effect.provide(Effect.flatMap(SqlClient.SqlClient, body), backend.store()))
      )

    it("runs a transaction's statements on its connection: each sees the last, and they commit together", async () => {
      const rows = await run((sql) =>
        Effect.gen(function*() {
          yield* sql`CREATE TABLE direct_notes (id INTEGER PRIMARY KEY, note TEXT NOT NULL)`
          const seen = yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO direct_notes ${sql.insert({ id: 1, note: "first" })}`
            yield* sql`UPDATE direct_notes SET note = ${"changed"} WHERE id = ${1}`
            // A statement nested in another as a fragment, and an identifier, as repositories write them.
            const inner = sql`SELECT id FROM direct_notes WHERE note = ${"changed"}`
            return yield* sql<{ note: string }>`SELECT note FROM ${sql("direct_notes")} WHERE id IN (${inner})`
          }))
          const after = yield* sql<{ note: string }>`SELECT note FROM direct_notes`
          return { seen, after }
        })
      )
      expect(rows.seen).toEqual([{ note: "changed" }])
      expect(rows.after).toEqual([{ note: "changed" }])
    })

    it("skips @effect/sql's own per-statement span inside a transaction, not outside one", async () => {
      const spans: Array<string> = []
      await run((sql) =>
        Effect.gen(function*() {
          const tracer = yield* Effect.tracer
          const recording = Tracer.make({
            span: (name, ...rest) => {
              spans.push(name)
              return tracer.span(name, ...rest)
            },
            context: tracer.context
          })
          yield* Effect.withTracer(
            Effect.gen(function*() {
              yield* sql`SELECT 1 AS one`
              yield* sql.withTransaction(sql`SELECT 2 AS two`)
            }),
            recording
          )
        })
      )
      expect(spans).toEqual(["sql.execute", "sql.transaction"])
    })

    it("rolls back every statement of a transaction when one fails, and reports the failure as an SqlError", async () => {
      const outcome = await run((sql) =>
        Effect.gen(function*() {
          yield* sql`CREATE TABLE direct_kept (id INTEGER PRIMARY KEY)`
          const failed = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO direct_kept ${sql.insert({ id: 1 })}`
            yield* sql`INSERT INTO direct_kept ${sql.insert({ id: 1 })}`
          })))
          const left = yield* sql<{ id: number }>`SELECT id FROM direct_kept`
          return { failed, left }
        })
      )
      expect(Exit.isFailure(outcome.failed)).toBe(true)
      if (Exit.isFailure(outcome.failed)) {
        expect(outcome.failed.cause._tag).toBe("Fail")
        expect(outcome.failed.cause._tag === "Fail" && outcome.failed.cause.error).toBeInstanceOf(SqlError)
      }
      expect(outcome.left).toEqual([])
    })
  })
}
