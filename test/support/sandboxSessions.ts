import { Chunk, Deferred, Duration, Effect, Exit, Layer, Option, Queue, Scope, Stream, TestClock } from "effect"
import { defaultSessionSettings, type SessionSettings } from "../../src/domain/SessionSettings.js"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { localDiskMediaStore } from "../../src/layers/media/mediaStoreLayers.js"
import { type AuthState, Engine, type EngineEvent, type OutboundContent } from "../../src/runtime/Engine.js"
import { SandboxLedger } from "../../src/runtime/engines/sandbox/Ledger.js"
import { SandboxEngineLive } from "../../src/runtime/engines/sandbox/SandboxEngine.js"
import { SandboxNetwork, type SandboxNetworkOptions, sandboxPhoneOf } from "../../src/runtime/engines/sandbox/SandboxNetwork.js"
import { ledgerAt } from "./sqlLedger.js"

/**
 * Sandbox sessions at the engine level: the real sandbox engine and network, linked sessions
 * whose events pile up in a queue for the test to look at.
 */

/** The network's media server keeps its blobs in a media store of its own per test. */
export const mediaStore = () => localDiskMediaStore(mkdtempSync(join(tmpdir(), "sandbox-media-")))

/** A network that lives and dies with the test; the simulated phone scans a QR after 5 seconds unless told otherwise. */
export const sandbox = (options: Partial<SandboxNetworkOptions> = {}) =>
  SandboxEngineLive.pipe(
    Layer.provideMerge(SandboxNetwork.layer({ pairDelay: "5 seconds", ...options })),
    Layer.provide(SandboxLedger.none),
    Layer.provideMerge(mediaStore())
  )

/** A network remembering in a SQLite file: building it again on the same file is a restarted gateway. */
export const sandboxOnFile = (file: string) =>
  SandboxEngineLive.pipe(
    Layer.provideMerge(SandboxNetwork.layer({ pairDelay: "5 seconds" })),
    Layer.provide(ledgerAt(file)),
    Layer.provideMerge(mediaStore())
  )

/** No credentials: the session shows QRs until the simulated phone scans one (after pairDelay). */
export const unlinkedAuth: AuthState = {
  readCreds: Effect.succeed(Option.none()),
  writeCreds: () => Effect.void,
  getKeys: () => Effect.succeed({}),
  setKeys: () => Effect.void,
  clear: Effect.void
}

/** Credentials as if the phone had been linked before: the session comes up Ready without a QR. */
export const linkedAuth: AuthState = {
  readCreds: Effect.succeed(Option.some<unknown>({ phone: "linked-before" })),
  writeCreds: () => Effect.void,
  getKeys: () => Effect.succeed({}),
  setKeys: () => Effect.void,
  clear: Effect.void
}

/**
 * Connects in a scope of its own (linked before, unless another `auth` is given); its events pile up
 * in a queue from the very first, for the test to read. `goOffline` closes the connection and waits
 * for its event stream to end.
 */
export const openSession = (sessionId: string, auth: AuthState = linkedAuth, settings: SessionSettings = defaultSessionSettings("recent")) =>
  Effect.gen(function*() {
    const engine = yield* Engine
    const scope = yield* Scope.make()
    const connection = yield* engine.connect({
      sessionId,
      auth,
      proxyUrl: Option.none(),
      lookupSent: () => Effect.succeedNone,
      lookupPoll: () => Effect.succeedNone,
      settings
    }).pipe(Scope.extend(scope))
    const events = yield* Queue.unbounded<EngineEvent>()
    const ended = yield* Deferred.make<void>()
    yield* connection.events.pipe(
      Stream.runForEach((event) => Queue.offer(events, event)),
      Effect.zipRight(Deferred.succeed(ended, undefined)),
      Effect.forkScoped
    )
    const phone = sandboxPhoneOf(sessionId)
    return {
      sessionId,
      phone,
      chatId: `${phone}@c.us`,
      connection,
      events,
      /** Done once the connection's event stream has ended (closed, replaced, logged out). */
      ended,
      nextEvent: Queue.take(events),
      /** Sends any content; `forwarded` marks it so. */
      send: (chatId: string, content: OutboundContent, forwarded?: boolean) =>
        connection.send({ engineMessageId: engine.newMessageId(), chatId, content, ...(forwarded === undefined ? {} : { forwarded }) }),
      sendText: (chatId: string, text: string) =>
        connection.send({ engineMessageId: engine.newMessageId(), chatId, content: { type: "text", text } }),
      // The connection's directory and message operations, at hand.
      groups: connection.groups,
      channels: connection.channels,
      labels: connection.labels,
      contacts: connection.contacts,
      markRead: connection.markRead,
      chats: connection.chats,
      react: connection.react,
      downloadMedia: connection.downloadMedia,
      goOffline: Scope.close(scope, Exit.void).pipe(Effect.zipRight(Deferred.await(ended)))
    }
  })

/** A session whose first event is Ready (it fails otherwise), that event already taken. */
export const openReady = (sessionId: string, auth?: AuthState) =>
  Effect.gen(function*() {
    const session = yield* openSession(sessionId, auth)
    const first = yield* session.nextEvent
    if (first._tag !== "Ready") throw new Error(`expected Ready, got ${first._tag}`)
    return session
  })

export type TestSession = Effect.Effect.Success<ReturnType<typeof openSession>>

/** Waits for the next event of that kind, skipping others (QRs, status noise). */
export const waitFor = <Tag extends EngineEvent["_tag"]>(session: TestSession, tag: Tag) =>
  Effect.gen(function*() {
    while (true) {
      const event = yield* session.nextEvent
      if (event._tag === tag) return event as Extract<EngineEvent, { _tag: Tag }>
    }
  })

/** Lets the network's fibers run, then takes everything the session has received. */
export const drained = (session: TestSession) =>
  TestClock.adjust(Duration.millis(1)).pipe(Effect.zipRight(Queue.takeAll(session.events)), Effect.map(Chunk.toReadonlyArray))

/** What arrived of that kind, other events (statuses) left aside. */
export const drainedOf = <Tag extends EngineEvent["_tag"]>(session: TestSession, tag: Tag) =>
  drained(session).pipe(Effect.map((events) => events.filter((event): event is Extract<EngineEvent, { _tag: Tag }> => event._tag === tag)))
