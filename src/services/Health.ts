import { Store } from "../runtime/ports/store/Store.js"
import { Clock, Context, Effect, Layer } from "effect"
import { Cache } from "../runtime/ports/Cache.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"
import { Engine } from "../runtime/Engine.js"
import { type HealthReport, VERSION } from "../domain/Health.js"

export class Health extends Context.Tag("switchboard/Health")<Health, {
  readonly report: Effect.Effect<HealthReport>
}>() {
  static readonly layer = Layer.effect(
    Health,
    Effect.gen(function*() {
      const store = yield* Store
      const cache = yield* Cache
      const supervisor = yield* SessionSupervisor
      const { clientVersion, name } = yield* Engine
      const startedAt = yield* Clock.currentTimeMillis
      const database = store.ping.pipe(
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
            uptime: Math.round(((yield* Clock.currentTimeMillis) - startedAt) / 1000),
            checks,
            engine: { name, waVersion: clientVersion },
            // Still restoring is healthy: the API answers and sends wait for their sessions.
            sessions: { restoring: yield* supervisor.restoring }
          } as const
        }).pipe(Effect.withSpan("Health.report"))
      })
    })
  )
}
