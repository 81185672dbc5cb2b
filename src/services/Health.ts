import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { Cache } from "../layers/cache/Cache.js"
import { createRequire } from "node:module"

/** The package version, read once (src/services and dist/services are both two levels down). */
export const VERSION: string = (createRequire(import.meta.url)("../../package.json") as { version: string }).version

export const HealthReport = Schema.Struct({
  status: Schema.Literal("ok", "degraded"),
  version: Schema.String,
  uptime: Schema.Number.annotations({ description: "seconds since start" }),
  checks: Schema.Record({ key: Schema.String, value: Schema.String })
})
export type HealthReport = typeof HealthReport.Type

export class Health extends Context.Tag("switchboard/Health")<Health, {
  readonly report: Effect.Effect<HealthReport>
}>() {
  static readonly layer = Layer.effect(
    Health,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cache = yield* Cache
      const startedAt = Date.now()
      const database = sql`SELECT 1 AS ok`.pipe(
        Effect.timeout("2 seconds"),
        Effect.as("ok"),
        Effect.orElseSucceed(() => "unreachable")
      )
      // The in-memory cache cannot be unreachable; Redis can, and then the gateway is not ready.
      const cacheCheck = cache.ping.pipe(Effect.timeout("2 seconds"), Effect.as("ok"), Effect.orElseSucceed(() => "unreachable"))
      return Health.of({
        report: Effect.gen(function*() {
          const [databaseCheck, cacheState] = yield* Effect.all([database, cacheCheck], { concurrency: 2 })
          const checks = { database: databaseCheck, cache: `${cache.backend}: ${cacheState}` }
          return {
            status: databaseCheck === "ok" && cacheState === "ok" ? "ok" : "degraded",
            version: VERSION,
            uptime: Math.round((Date.now() - startedAt) / 1000),
            checks
          } as const
        })
      })
    })
  )
}
