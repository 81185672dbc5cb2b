import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { DateTime, Effect, Layer, TestClock } from "effect"
import * as path from "node:path"
import { AppSettings } from "../src/domain/Settings.js"
import { SqlApiKeyRepo } from "../src/layers/store/ApiKeyRepo.js"
import { SqliteStoreLive } from "../src/layers/store/SqliteStore.js"
import { CachedCopies } from "../src/runtime/CachedCopies.js"
import { ApiKeys } from "../src/services/ApiKeys.js"
import { tempDir, testSettings } from "./support/gateway.js"

/**
 * The services take the time from the Clock, so a test (or an embedder) that sets the clock sets
 * what the services see: when a key was made, and whether it has expired yet.
 */

const keysOnAFreshStore = Layer.unwrapEffect(
  Effect.map(testSettings({ dataDir: tempDir() }), (settings) =>
    ApiKeys.layer.pipe(
      Layer.provide(SqlApiKeyRepo),
      Layer.provide(SqliteStoreLive(path.join(settings.dataDir, "switchboard.db"))),
      Layer.provide([CachedCopies.singleProcess, NodeContext.layer, AppSettings.layer(settings)])
    ))
)

/** A moment long past: no wall clock would give it. */
const JAN_2001 = DateTime.unsafeMake("2001-01-01T00:00:00.000Z")

describe("the services' time", () => {
  it.scoped("is the Clock's: a key made under a test clock bears its time, and expires when that clock passes its expiry", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DateTime.toEpochMillis(JAN_2001))
      const keys = yield* ApiKeys
      // An hour after the test clock's now: in the future for the service, long past for the wall clock.
      const created = yield* keys.create({ name: "short-lived", role: "viewer", expiresAt: DateTime.add(JAN_2001, { hours: 1 }) })
      expect(created.createdAt).toBe("2001-01-01T00:00:00.000Z")
      expect(created.status).toBe("active")
      expect((yield* keys.authenticate(created.key)).name).toBe("short-lived")

      yield* TestClock.adjust("2 hours")
      expect((yield* keys.get(created.id)).status).toBe("expired")
      const refused = yield* Effect.flip(keys.authenticate(created.key))
      expect(refused).toMatchObject({ _tag: "Unauthorized", message: "this API key has expired" })
    }).pipe(Effect.provide(keysOnAFreshStore)))
})
