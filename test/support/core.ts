import { Chunk, Clock, Context, Duration, Effect, Layer, Ref, Stream, TestClock } from "effect"
import { SwitchboardCore } from "../../src/app/App.js"
import { SqlSandboxLedger } from "../../src/layers/store/SqlSandboxLedger.js"
import type { Settings } from "../../src/domain/Settings.js"
import { type ConnectOptions, Engine, type EngineConnection, type SendCommand } from "../../src/runtime/Engine.js"
import type { PresenceCommand } from "../../src/runtime/EngineMessageActions.js"
import { SandboxEngineLive } from "../../src/runtime/engines/sandbox/SandboxEngine.js"
import { SandboxNetwork } from "../../src/runtime/engines/sandbox/SandboxNetwork.js"
import { SessionSupervisor } from "../../src/runtime/SessionSupervisor.js"
import { Events } from "../../src/runtime/Events.js"
import { type DomainEvent } from "../../src/domain/Events.js"
import { Messaging } from "../../src/services/Messaging.js"
import type { SessionStatus } from "../../src/domain/Session.js"
import { Sessions } from "../../src/services/Sessions.js"
import { testSettings } from "./gateway.js"

/** Runs before every engine connect; a failure or defect here is what the actor sees. */
export type ConnectHook = (options: ConnectOptions) => Effect.Effect<void>

/** A presence command a connection was handed, and the clock time it was. */
export type RecordedPresence = PresenceCommand & { readonly sessionId: string; readonly at: number }

/**
 * The sandbox engine, with a hook in front of `connect` (to record attempts or inject
 * crashes) and a record of every send and presence command handed to a connection.
 */
const hookedSandbox = (
  settings: Settings,
  hook: ConnectHook,
  sent: Ref.Ref<ReadonlyArray<SendCommand>>,
  presence: Ref.Ref<ReadonlyArray<RecordedPresence>>
) =>
  Layer.effect(
    Engine,
    Effect.map(Engine, (inner) => ({
      ...inner,
      connect: (options: ConnectOptions) =>
        // By delegation, not a spread: the sandbox's connection keeps its operations in getters.
        Effect.zipRight(hook(options), inner.connect(options)).pipe(Effect.map((connection): EngineConnection =>
          Object.create(connection, {
            send: {
              value: (command: SendCommand) =>
                Effect.zipRight(Ref.update(sent, (list) => [...list, command]), connection.send(command))
            },
            presence: {
              value: {
                ...connection.presence,
                set: (command: PresenceCommand) =>
                  Effect.zipRight(
                    Effect.flatMap(Clock.currentTimeMillis, (at) =>
                      Ref.update(presence, (list) => [...list, { ...command, sessionId: options.sessionId, at }])),
                    connection.presence.set(command)
                  )
              }
            }
          })
        ))
    }))
  ).pipe(
    Layer.provide(SandboxEngineLive),
    Layer.provideMerge(SandboxNetwork.layer({ pairDelay: settings.sandboxPairDelay })),
    Layer.provide(SqlSandboxLedger)
  )

/**
 * The core runtime (no HTTP) on a fresh SQLite file, built in the current scope: under
 * `it.scoped` its timers run on the TestClock. Records the clock time of every connect attempt.
 */
export const startCore = (overrides: Partial<Settings> = {}, hook: ConnectHook = () => Effect.void) =>
  Effect.gen(function*() {
    const settings = yield* testSettings(overrides)
    const attempts = yield* Ref.make<ReadonlyArray<{ readonly sessionId: string; readonly at: number; readonly proxyUrl: string | null }>>([])
    const recording: ConnectHook = (options) =>
      Effect.zipRight(
        Effect.flatMap(Clock.currentTimeMillis, (at) =>
          Ref.update(attempts, (list) => [...list, { sessionId: options.sessionId, at, proxyUrl: options.proxyUrl._tag === "Some" ? options.proxyUrl.value : null }])),
        hook(options)
      )
    const sent = yield* Ref.make<ReadonlyArray<SendCommand>>([])
    const presence = yield* Ref.make<ReadonlyArray<RecordedPresence>>([])
    const context = yield* Layer.build(SwitchboardCore(settings, hookedSandbox(settings, recording, sent, presence))).pipe(Effect.orDie)
    const events = Context.get(context, Events)
    const seen = yield* Ref.make(Chunk.empty<DomainEvent>())
    const subscription = yield* events.subscribe
    yield* Effect.forkScoped(Stream.runForEach(subscription, (event) => Ref.update(seen, Chunk.append(event))))
    const supervisor = Context.get(context, SessionSupervisor)
    return {
      settings,
      /** Every service of the core, for what the fields below do not name. */
      context,
      sessions: Context.get(context, Sessions),
      messaging: Context.get(context, Messaging),
      supervisor,
      network: Context.get(context, SandboxNetwork),
      /** Every send command the engine was handed, in order. */
      sentCommands: Ref.get(sent),
      /** Every presence command the engine was handed (the sandbox may refuse it), in order. */
      presenceCommands: Ref.get(presence),
      attempts: (sessionId: string) => Effect.map(Ref.get(attempts), (list) => list.filter((a) => a.sessionId === sessionId)),
      /** The `session.status` transitions published so far for a session, in order. */
      statuses: (sessionId: string) =>
        Effect.map(Ref.get(seen), (events) =>
          Chunk.toReadonlyArray(events)
            .filter((e) => e.event === "session.status" && e.sessionId === sessionId)
            .map((e) => (e.data as { status: SessionStatus }).status)),
      events: (sessionId: string) => Effect.map(Ref.get(seen), (events) => Chunk.toReadonlyArray(events).filter((e) => e.sessionId === sessionId)),
      /** Waits (without a clock timeout: the test's own timeout bounds it) for a status. */
      awaitStatus: (sessionId: string, status: SessionStatus) =>
        supervisor.watch(sessionId).pipe(Stream.filter((s) => s.status === status), Stream.take(1), Stream.runDrain)
    }
  })

export type Core = Effect.Effect.Success<ReturnType<typeof startCore>>

/** A reconnect policy quick enough for tests on the TestClock: 1 s, doubling up to 8 s, 5 attempts. */
export const quickReconnect = {
  initialDelay: Duration.seconds(1),
  maxDelay: Duration.seconds(8),
  maxAttempts: 5,
  healthyAfter: Duration.seconds(30)
}

/** Whether the session's status is `status` now. */
export const statusIs = (core: Core, sessionId: string, status: string) =>
  Effect.map(core.sessions.get(sessionId), (s) => s.status === status).pipe(Effect.orDie)

/** A new session of `name`, started and linked (the sandbox pairs by itself): its id, once ready. */
export const createAndLink = (core: Core, name: string) =>
  Effect.gen(function*() {
    const session = yield* core.sessions.create({ name })
    yield* core.supervisor.start(session.id)
    yield* advanceUntil(statusIs(core, session.id, "ready"))
    return session.id
  })

/**
 * Advances the TestClock in small steps until `done` holds, letting every fiber run (and the
 * event loop turn) between steps, so chains of timers fire in order and at their own times.
 */
export const advanceUntil = (done: Effect.Effect<boolean>, step: Duration.DurationInput = "100 millis", maxSteps = 5_000) =>
  Effect.gen(function*() {
    for (let i = 0; i < maxSteps; i++) {
      yield* letFibersRun
      if (yield* done) return
      yield* TestClock.adjust(step)
    }
    return yield* Effect.die(new Error(`condition not reached after ${maxSteps} clock steps`))
  })

export const letFibersRun = Effect.gen(function*() {
  for (let i = 0; i < 5; i++) {
    yield* Effect.yieldNow()
    yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
  }
})
