import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Layer, Logger, Option } from "effect"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { AppSettings } from "../src/domain/Settings.js"
import { ApiKeyRepo } from "../src/runtime/ports/store/ApiKeyRepo.js"
import { SqlApiKeyRepo } from "../src/layers/store/ApiKeyRepo.js"
import { SqliteStoreLive } from "../src/layers/store/SqliteStore.js"
import { CachedCopies } from "../src/runtime/CachedCopies.js"
import { ApiKeys, hashApiKey } from "../src/services/ApiKeys.js"
import { TEST_KEY, tempDir, testSettings } from "./support/gateway.js"

/**
 * A key's `lastUsedAt` is written beside the request that used it. The write belongs to the
 * keys service: it is seen to fail, and it is done before the service (and the Store) closes.
 */

const storeFile = () => path.join(tempDir(), "switchboard.db")

const keysOn = (file: string) =>
  Effect.map(testSettings({ dataDir: path.dirname(file) }), (settings) =>
    ApiKeys.layer.pipe(
      Layer.provideMerge(SqlApiKeyRepo),
      Layer.provideMerge(SqliteStoreLive(file)),
      Layer.provide([CachedCopies.singleProcess, NodeContext.layer, AppSettings.layer(settings)])
    )
  )

/** What the key's row says once everything that used it has closed. */
const lastUseIn = (file: string) =>
  Effect.flatMap(ApiKeyRepo, (repo) => repo.findByHash(hashApiKey(TEST_KEY))).pipe(
    Effect.map(Option.map((row) => row.lastUsedAt)),
    Effect.provide(SqlApiKeyRepo.pipe(Layer.provide(SqliteStoreLive(file))))
  )

const capturingLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ annotations, cause, logLevel, message }) => {
    const annotated = [...annotations].map(([key, value]) => `${key}=${String(value)}`).join(" ")
    lines.push(`${logLevel.label} ${String(message)} ${annotated} ${Cause.isEmpty(cause) ? "" : Cause.pretty(cause)}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("a key's last use", () => {
  it("is recorded for a use just before the service closes, before the Store goes", async () => {
    const file = storeFile()
    const keys = await Effect.runPromise(keysOn(file))
    const principal = await Effect.runPromise(
      Effect.flatMap(ApiKeys, (service) => Effect.zipRight(service.bootstrap, service.authenticate(TEST_KEY))).pipe(
        Effect.provide(keys)
      )
    )
    expect(principal.role).toBe("admin")
    const lastUse = await Effect.runPromise(lastUseIn(file))
    expect(Option.getOrNull(lastUse)).not.toBeNull()
  })

  it("that cannot be written is logged, without the key, and the key still works", async () => {
    const file = storeFile()
    const keys = await Effect.runPromise(keysOn(file))
    const logs = capturingLogs()
    const keyId = await Effect.runPromise(
      Effect.gen(function*() {
        const service = yield* ApiKeys
        yield* service.bootstrap
        const sql = yield* SqlClient.SqlClient
        // The Store refuses this one write, as a full disk or a lost connection would.
        yield* sql`CREATE TRIGGER refuse_last_use BEFORE UPDATE OF last_used_at ON api_keys
          BEGIN SELECT RAISE(ABORT, 'the store refuses the write'); END`
        return (yield* service.authenticate(TEST_KEY)).keyId
      }).pipe(Effect.provide(keys), Effect.provide(logs.layer))
    )
    const reported = logs.lines.filter((line) => /^(WARN|ERROR)/.test(line) && line.includes(keyId))
    expect(reported).toHaveLength(1)
    expect(reported[0]).toContain("last use")
    const everything = logs.lines.join("\n")
    expect(everything).not.toContain(TEST_KEY)
    expect(everything).not.toContain(hashApiKey(TEST_KEY))
    expect(Option.getOrNull(await Effect.runPromise(lastUseIn(file)))).toBeNull()
  })
})
