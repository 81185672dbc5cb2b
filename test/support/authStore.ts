import { Effect, Layer } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { RepositoriesLive, SqliteStoreLive } from "../../src/layers/store/index.js"
import { AuthRepo } from "../../src/runtime/ports/store/AuthRepo.js"
import { SessionRepo } from "../../src/runtime/ports/store/SessionRepo.js"
import { sessionRow } from "./fixtures.js"

/** The repositories over a fresh SQLite file, for a session's auth rows. */
export const authStoreLayer = () =>
  RepositoriesLive.pipe(Layer.provideMerge(SqliteStoreLive(join(mkdtempSync(join(tmpdir(), "switchboard-auth-")), "store.db"))))

/** A session row for the auth rows' foreign key, and that session's real (SQLite) AuthState. */
export const realAuth = Effect.gen(function*() {
  const row = sessionRow({ engine: "baileys" })
  yield* (yield* SessionRepo).insert(row)
  return (yield* AuthRepo).forSession(row.id)
})
