import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { serverUrl } from "./availability.js"

/**
 * A new, empty database on the test Postgres (TEST_POSTGRES_URL), and its URL: one per test
 * file (or per suite), so that files running in parallel never see each other's rows. They are
 * dropped with the whole cluster when the run ends.
 */
export const freshPostgresUrl = (label = "sb"): Effect.Effect<string> =>
  Effect.gen(function*() {
    const admin = serverUrl("postgres")
    const name = `${label.toLowerCase().replace(/[^a-z0-9_]/g, "_")}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
    yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE "${name}"`)).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(admin), applicationName: "switchboard-tests" }))
    )
    const url = new URL(admin)
    url.pathname = `/${name}`
    return url.toString()
  }).pipe(Effect.orDie)

export const freshPostgresUrlPromise = (label?: string) => Effect.runPromise(freshPostgresUrl(label))
