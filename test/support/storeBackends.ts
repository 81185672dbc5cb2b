import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RepositoriesLive, storeLayerFromUrl } from "../../src/layers/store/index.js"
import { unavailable } from "./servers/availability.js"
import { freshPostgresUrl } from "./servers/postgresDatabase.js"

/**
 * The Store's two backends, for suites that run once on each: one suite body, two layers.
 *
 *   for (const backend of storeBackends("store.test.ts")) {
 *     describe.skipIf(backend.skip)(backend.name, () => { … backend.repositories() … })
 *   }
 */
export interface StoreBackend {
  readonly name: "SQLite" | "Postgres"
  /** Why this backend's suite is skipped (warned about loudly), or false. */
  readonly skip: string | false
  /** The URL of a new, empty database (created when the effect runs). */
  readonly freshUrl: Effect.Effect<string>
  /** The Store on a new, empty database (built when the layer is), migrated. */
  readonly store: () => Layer.Layer<SqlClient.SqlClient, unknown>
  /** The same with every repository. */
  readonly repositories: () => Layer.Layer<Layer.Layer.Success<typeof RepositoriesLive> | SqlClient.SqlClient, unknown>
}

/** A SQLite file in a new temp directory, under a sub-directory the Store must create. */
export const freshSqliteUrl: Effect.Effect<string> = Effect.sync(() =>
  `sqlite:${join(mkdtempSync(join(tmpdir(), "switchboard-store-")), "data", "store.db")}`
)

const backend = (name: StoreBackend["name"], skip: string | undefined, freshUrl: Effect.Effect<string>): StoreBackend => {
  const store = () => Layer.unwrapEffect(Effect.map(freshUrl, storeLayerFromUrl))
  return {
    name,
    skip: skip ?? false,
    freshUrl,
    store,
    repositories: () => RepositoriesLive.pipe(Layer.provideMerge(store()))
  }
}

/** SQLite (a file) and Postgres (a database of its own on the test server); `file` names the suite in skip warnings. */
export const storeBackends = (file: string): ReadonlyArray<StoreBackend> => [
  backend("SQLite", undefined, freshSqliteUrl),
  backend("Postgres", unavailable("postgres", `the Postgres half of ${file}`), freshPostgresUrl(file.replace(/\.test\.ts$/, "")))
]
