import { localDiskMediaStore } from "../src/layers/media/mediaStoreLayers.js"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Option, Ref, Stream } from "effect"
import { defaultSettings } from "../src/app/Config.js"
import { storeFromSettings } from "../src/app/App.js"
import { MediaStore } from "../src/runtime/ports/MediaStore.js"
import { MessageRepo } from "../src/runtime/ports/store/MessageRepo.js"
import { SessionRepo } from "../src/runtime/ports/store/SessionRepo.js"
import { EngineError, EngineEvent, type InboundMessage } from "../src/runtime/Engine.js"
import { handleEngineEvent, type InboundContext } from "../src/runtime/InboundEvents.js"
import { Events } from "../src/runtime/Events.js"
import { type DomainEvent } from "../src/domain/Events.js"
import { letFibersRun } from "./support/core.js"
import { sessionRow } from "./support/fixtures.js"
import { tempDir } from "./support/gateway.js"

const inbound = (overrides: Partial<InboundMessage>): InboundMessage => ({
  engineMessageId: "3EB0AAAA",
  chatId: "15550002222@c.us",
  from: "15550002222@c.us",
  fromPhone: "15550002222@c.us",
  fromLid: "200000000000001@lid",
  type: "text",
  text: "hello",
  timestamp: new Date("2026-01-01T00:00:00.000Z"),
  ...overrides
})

/** A fresh Store (SQLite file, media directory, outbox) holding the linked session "s1". */
const storeWithSession = Effect.gen(function*() {
  const dataDir = tempDir()
  const settings = yield* defaultSettings({ dataDir, databaseUrl: `sqlite:${dataDir}/sb.db` })
  const insertSession = Layer.effectDiscard(Effect.flatMap(SessionRepo, (sessions) =>
    sessions.insert(sessionRow({ id: "s1", engine: "baileys", status: "ready", phone: "15550001111" }))))
  return insertSession.pipe(
    Layer.provideMerge(Layer.mergeAll(Events.layer.pipe(Layer.provideMerge(storeFromSettings(settings))), localDiskMediaStore(`${dataDir}/media`)))
  )
})

/** Neither test rings or goes online: what a session actor offers for calls and presence is not asked for. */
const noAccountActions = {
  rejectCall: () => Effect.die("no calls in this test"),
  setOnline: Effect.die("no presence in this test"),
  queueSend: () => Effect.die("no sends in this test"),
  newMessageId: () => "3EB0NEVER"
} satisfies Pick<InboundContext, "rejectCall" | "setOnline" | "queueSend" | "newMessageId">

describe("inbound messages from an engine", () => {
  it.scoped("stores an unreadable message as unknown with its error, and takes the content when it is resent readable", () =>
    Effect.gen(function*() {
      const layer = yield* storeWithSession
      yield* Effect.gen(function*() {
        const seen = yield* Ref.make(Chunk.empty<DomainEvent>())
        yield* Effect.forkScoped(Stream.runForEach(yield* (yield* Events).subscribe, (e) => Ref.update(seen, Chunk.append(e))))
        const context: InboundContext = {
          sessionId: "s1",
          media: { incoming: "store", maxBytes: 1024, keepRevoked: false },
          downloadMedia: () => Effect.die("no media in this test"),
          setStatus: () => Effect.void,
          showQr: () => Effect.void,
          markReady: Effect.void,
          ...noAccountActions
        }
        const deliver = (message: InboundMessage) => handleEngineEvent(EngineEvent.MessageReceived({ message }), context)

        yield* deliver(inbound({ type: "unknown", text: null, error: { code: "DECRYPTION_FAILED", message: "no session" } }))
        const messages = yield* MessageRepo
        const stored = Option.getOrThrow(yield* messages.findByEngineId("s1", "3EB0AAAA"))
        expect(stored).toMatchObject({ type: "unknown", text: null, error: { code: "DECRYPTION_FAILED" }, fromMe: false })

        yield* deliver(inbound({}))
        yield* deliver(inbound({})) // a plain duplicate changes nothing
        const revised = Option.getOrThrow(yield* messages.findById("s1", stored.id))
        expect(revised).toMatchObject({ type: "text", text: "hello", error: null })
        const list = yield* messages.list("s1", {}, Option.none())
        expect(list.total).toBe(1)

        yield* letFibersRun
        const received = Chunk.toReadonlyArray(yield* Ref.get(seen)).filter((e) => e.event === "message.received")
        expect(received.map((e) => (e.data as { message: { type: string } }).message.type)).toEqual(["unknown", "text"])
        expect(received[1]!.data).toMatchObject({ phone: "15550002222@c.us", lid: "200000000000001@lid" })
      }).pipe(Effect.provide(layer))
    }))

  it.scoped("keeps received media in the media store; a failed or oversized download keeps the message, marked", () =>
    Effect.gen(function*() {
      const layer = yield* storeWithSession
      yield* Effect.gen(function*() {
        const bytes = new Uint8Array([1, 2, 3, 4, 5])
        const downloads: Array<unknown> = []
        const context: InboundContext = {
          sessionId: "s1",
          media: { incoming: "store", maxBytes: 10, keepRevoked: false },
          downloadMedia: (media) =>
            Effect.suspend(() => {
              downloads.push(media.ref)
              return media.ref === "gone"
                ? Effect.fail(new EngineError({ code: "MEDIA_GONE", message: "the media expired", transient: false }))
                : Effect.succeed(media.ref === "big" ? new Uint8Array(11) : bytes)
            }),
          setStatus: () => Effect.void,
          showQr: () => Effect.void,
          markReady: Effect.void,
          ...noAccountActions
        }
        const image = (engineMessageId: string, ref: string, size: number | null) =>
          handleEngineEvent(EngineEvent.MessageReceived({
            message: inbound({
              engineMessageId,
              type: "image",
              text: null,
              caption: "a picture",
              media: { mimetype: "image/png", filename: null, size, ptt: false, ref }
            })
          }), context)
        const messages = yield* MessageRepo
        const store = yield* MediaStore
        const stored = (engineMessageId: string) => Effect.map(messages.findByEngineId("s1", engineMessageId), Option.getOrThrow)

        yield* image("OK", "ok", 5)
        const ok = yield* stored("OK")
        expect(ok).toMatchObject({ type: "image", caption: "a picture", media: { size: 5, stored: true }, error: null })
        expect(Option.getOrThrow(yield* store.read(`s1/${ok.id}`))).toEqual(bytes)

        yield* image("GONE", "gone", 5)
        expect(yield* stored("GONE")).toMatchObject({ media: { stored: false }, error: { code: "MEDIA_DOWNLOAD_FAILED" } })

        // Announced too large: not even downloaded. Larger than announced: downloaded, not kept.
        yield* image("BIG", "never", 11)
        yield* image("LIAR", "big", 5)
        expect(yield* stored("BIG")).toMatchObject({ media: { stored: false }, error: { code: "MEDIA_TOO_LARGE" } })
        expect(yield* stored("LIAR")).toMatchObject({ media: { stored: false }, error: { code: "MEDIA_TOO_LARGE" } })
        expect(downloads).toEqual(["ok", "gone", "big"])

        // First unreadable, then resent readable: the same message takes the media.
        yield* handleEngineEvent(EngineEvent.MessageReceived({
          message: inbound({ engineMessageId: "LATE", type: "unknown", text: null, error: { code: "DECRYPTION_FAILED", message: "no session" } })
        }), context)
        yield* image("LATE", "ok", 5)
        const late = yield* stored("LATE")
        expect(late).toMatchObject({ type: "image", caption: "a picture", media: { stored: true }, error: null })
        expect(Option.isSome(yield* store.read(`s1/${late.id}`))).toBe(true)
      }).pipe(Effect.provide(layer))
    }))
})
