import { Chunk, Effect, Layer, Option, Ref, Stream } from "effect"
import type { DomainEvent } from "../../src/domain/Events.js"
import type { InboundContext } from "../../src/runtime/InboundEvents.js"
import { storeFromSettings } from "../../src/app/App.js"
import { defaultSettings } from "../../src/app/Config.js"
import { localDiskMediaStore } from "../../src/layers/media/mediaStoreLayers.js"
import { Events } from "../../src/runtime/Events.js"
import type { SessionRow } from "../../src/runtime/ports/store/SessionRepo.js"
import { SessionRepo } from "../../src/runtime/ports/store/SessionRepo.js"
import { sessionRow } from "./fixtures.js"
import { letFibersRun } from "./core.js"
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

type StoreServices = Layer.Layer.Success<Effect.Effect.Success<ReturnType<typeof storeWithSession>>>

/**
 * Runs `body` against a fresh Store holding session "s1" (with `overrides`), collecting the events
 * it publishes: `seen` gives those published so far, once the fibers delivering them have run.
 */
export const withSessionStore = (
  overrides: Partial<SessionRow>,
  body: (seen: Effect.Effect<ReadonlyArray<DomainEvent>>) => Effect.Effect<void, unknown, StoreServices>
) =>
  Effect.gen(function*() {
    const layer = yield* storeWithSession(overrides)
    yield* Effect.gen(function*() {
      const events = yield* Ref.make(Chunk.empty<DomainEvent>())
      yield* Effect.forkScoped(Stream.runForEach(yield* (yield* Events).subscribe, (e) => Ref.update(events, Chunk.append(e))))
      yield* body(letFibersRun.pipe(Effect.zipRight(Ref.get(events)), Effect.map(Chunk.toReadonlyArray)))
    }).pipe(Effect.provide(layer))
  })

/**
 * What a session actor hands the runtime for session "s1", as these tests need it: media kept up to 1 KiB, no
 * downloads, status and QR changes ignored, and no calls, presence or sends asked for (each dies if it is).
 * A test replaces only the parts it exercises.
 */
export const inboundContext = (overrides: Partial<InboundContext> = {}): InboundContext => ({
  sessionId: "s1",
  linkedFrom: Option.none(),
  media: { incoming: "store", maxBytes: 1024, keepRevoked: false },
  downloadMedia: () => Effect.die("no media in this test"),
  setStatus: () => Effect.void,
  showQr: () => Effect.void,
  markReady: Effect.void,
  rejectCall: () => Effect.die("no calls in this test"),
  setOnline: Effect.die("no presence in this test"),
  queueSend: () => Effect.die("no sends in this test"),
  newMessageId: () => "3EB0NEVER",
  ...overrides
})
