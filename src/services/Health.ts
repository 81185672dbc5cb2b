import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Ref } from "effect"
import { createRequire } from "node:module"

/** The package version, read once (src/services and dist/services are both two levels down). */
export const VERSION: string = (createRequire(import.meta.url)("../../package.json") as { version: string }).version

export interface HealthReport {
  readonly status: "ok" | "degraded" | "draining"
  readonly version: string
  readonly uptime: number
  readonly checks: Record<string, string>
}

export interface HealthService {
  readonly report: Effect.Effect<HealthReport>
  /** Marks the gateway as shutting down: readiness turns 503 so load balancers stop sending. */
  readonly drain: Effect.Effect<void>
}

export class Health extends Context.Tag("switchboard/Health")<Health, HealthService>() {
  static readonly layer = Layer.effect(
    Health,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const draining = yield* Ref.make(false)
      const startedAt = Date.now()
      const database = sql`SELECT 1 AS ok`.pipe(
        Effect.timeout("2 seconds"),
        Effect.as("ok"),
        Effect.orElseSucceed(() => "unreachable")
      )
      return Health.of({
        report: Effect.gen(function*() {
          const checks = { database: yield* database }
          const status = (yield* Ref.get(draining)) ? "draining" : checks.database === "ok" ? "ok" : "degraded"
          return { status, version: VERSION, uptime: Math.round((Date.now() - startedAt) / 1000), checks }
        }),
        drain: Ref.set(draining, true)
      })
    })
  )
}
