import { Effect, Layer } from "effect"
import { storeFromSettings } from "../../src/app/App.js"
import { defaultSettings } from "../../src/app/Config.js"
import { localDiskMediaStore } from "../../src/layers/media/mediaStoreLayers.js"
import { Events } from "../../src/runtime/Events.js"
import type { SessionRow } from "../../src/runtime/ports/store/SessionRepo.js"
import { SessionRepo } from "../../src/runtime/ports/store/SessionRepo.js"
import { sessionRow } from "./fixtures.js"
import { tempDir } from "./gateway.js"

/** A fresh Store (SQLite file, media directory, outbox) holding the linked session "s1" (with `overrides`). */
export const storeWithSession = (overrides: Partial<SessionRow> = {}) =>
  Effect.gen(function*() {
    const dataDir = tempDir()
    const settings = yield* defaultSettings({ dataDir, databaseUrl: `sqlite:${dataDir}/sb.db` })
    const insertSession = Layer.effectDiscard(Effect.flatMap(SessionRepo, (sessions) =>
      sessions.insert(sessionRow({ id: "s1", engine: "baileys", status: "ready", phone: "15550001111", ...overrides }))))
    return insertSession.pipe(
      Layer.provideMerge(Layer.mergeAll(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings))), localDiskMediaStore(`${dataDir}/media`)))
    )
  })
