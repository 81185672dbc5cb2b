import { Cause, Context, Deferred, Effect, FiberMap, Layer, Option, Stream, SynchronizedRef } from "effect"
import { AuthRepo } from "../layers/store/AuthRepo.js"
import { MessageRepo } from "../layers/store/MessageRepo.js"
import { SessionRepo } from "../layers/store/SessionRepo.js"
import { Conflict, type EngineFailure } from "../services/Errors.js"
import { Events, makeEvent } from "../services/Events.js"
import { runningStatuses, type SessionStatus } from "../services/Session.js"
import { Engine } from "./Engine.js"
import { actorRestartSchedule, type ReconnectSettings } from "./ReconnectPolicy.js"
import { ActorCommand, type ActorState, makeHandle, runSessionActor, type SessionActorHandle } from "./SessionActor.js"

/** How long an actor may take to wind down after Stop/Logout before it is interrupted. */
const STOP_GRACE = "10 seconds"

export interface SessionSupervisorService {
  /** Starts the session's actor if it is not running. Idempotent. */
  readonly start: (sessionId: string) => Effect.Effect<void>
  /** Stops the actor (status `stopped`); the session is not restored on the next boot. */
  readonly stop: (sessionId: string) => Effect.Effect<void>
  /** Relinks a running session from scratch, or starts a stopped one. */
  readonly restart: (sessionId: string) => Effect.Effect<void>
  /** Unlinks the account and wipes its credentials (status `logged_out`). */
  readonly logout: (sessionId: string) => Effect.Effect<void>
  /** Stops the session and removes it with all its data. */
  readonly remove: (sessionId: string) => Effect.Effect<void>
  /** Hands a stored `pending` message to the session's actor; false when it is not running. */
  readonly send: (sessionId: string, messageId: string) => Effect.Effect<boolean>
  readonly requestPairingCode: (
    sessionId: string,
    phoneNumber: string
  ) => Effect.Effect<string, Conflict | EngineFailure>
  /** Sends read receipts for messages received in a chat. */
  readonly markRead: (
    sessionId: string,
    chatId: string,
    engineMessageIds: ReadonlyArray<string>
  ) => Effect.Effect<void, Conflict | EngineFailure>
  /** The live state of a running session. */
  readonly state: (sessionId: string) => Effect.Effect<Option.Option<ActorState>>
  /** The live state of a running session and its changes; empty when it is not running. */
  readonly watch: (sessionId: string) => Stream.Stream<ActorState>
  /** Starts every session that was running when the gateway last stopped. */
  readonly restore: Effect.Effect<number>
  /** Ids of the sessions whose actors are alive. */
  readonly running: Effect.Effect<ReadonlyArray<string>>
}

/**
 * Owns the session actors: one supervised fiber per running session, in a `FiberMap` keyed by
 * session id. An actor that crashes is restarted with backoff, with its mailbox and state
 * intact, and no other session notices. Closing the supervisor's scope (SIGTERM/SIGINT)
 * interrupts every actor, which ends every engine connection.
 */
export class SessionSupervisor extends Context.Tag("switchboard/SessionSupervisor")<
  SessionSupervisor,
  SessionSupervisorService
>() {
  static readonly layer = (reconnect: ReconnectSettings) => Layer.scoped(SessionSupervisor, make(reconnect))
}

const make = (reconnect: ReconnectSettings) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Engine | SessionRepo | MessageRepo | AuthRepo | Events>()
    const sessions = yield* SessionRepo
    const auth = yield* AuthRepo
    const events = yield* Events
    const fibers = yield* FiberMap.make<string>()
    const handles = yield* SynchronizedRef.make(new Map<string, SessionActorHandle>())

    const handleOf = (sessionId: string) => Effect.map(SynchronizedRef.get(handles), (map) => Option.fromNullable(map.get(sessionId)))

    const forget = (handle: SessionActorHandle) =>
      SynchronizedRef.update(handles, (map) => {
        if (map.get(handle.sessionId) !== handle) return map
        const next = new Map(map)
        next.delete(handle.sessionId)
        return next
      })

    /** Runs the actor; a crash (a defect, never an interruption) restarts it with backoff. */
    const supervise = (handle: SessionActorHandle) =>
      runSessionActor(handle, reconnect).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.zipRight(Effect.logError("session actor crashed; restarting", cause), Effect.fail("crashed" as const))
        ),
        Effect.retry(actorRestartSchedule),
        Effect.ignore,
        Effect.ensuring(forget(handle)),
        Effect.provide(context)
      )

    const start = (sessionId: string) =>
      SynchronizedRef.updateEffect(handles, (map) =>
        Effect.gen(function*() {
          if (map.has(sessionId)) return map
          const row = yield* sessions.findById(sessionId)
          if (Option.isNone(row)) return map
          yield* sessions.update(sessionId, { desiredRunning: true })
          const handle = yield* makeHandle(sessionId, row.value.status, row.value.lastError)
          yield* FiberMap.run(fibers, sessionId, supervise(handle))
          return new Map(map).set(sessionId, handle)
        }))

    /** Asks the actor to finish with a command, waits for it, and interrupts it if it hangs. */
    const finish = (sessionId: string, command: (done: Deferred.Deferred<void>) => ActorCommand) =>
      Effect.gen(function*() {
        const handle = yield* handleOf(sessionId)
        if (Option.isNone(handle)) return false
        const done = yield* Deferred.make<void>()
        yield* handle.value.mailbox.offer(command(done))
        yield* Deferred.await(done).pipe(Effect.timeout(STOP_GRACE), Effect.ignore)
        yield* FiberMap.remove(fibers, sessionId)
        yield* forget(handle.value)
        return true
      })

    /** For a session with no live actor: record the status it ends in, if it changed. */
    const settle = (sessionId: string, status: SessionStatus) =>
      Effect.gen(function*() {
        const row = yield* sessions.findById(sessionId)
        if (Option.isNone(row) || row.value.status === status) return
        yield* sessions.update(sessionId, { status })
        yield* events.publish(makeEvent("session.status", sessionId, {
          status,
          previousStatus: row.value.status,
          reason: null
        }))
      })

    const stop = (sessionId: string) =>
      Effect.gen(function*() {
        yield* sessions.update(sessionId, { desiredRunning: false })
        const wasRunning = yield* finish(sessionId, (done) => ActorCommand.Stop({ done }))
        const row = yield* sessions.findById(sessionId)
        // A session left in a running status by a crash is stopped too; terminal ones stay as they are.
        if (!wasRunning && Option.isSome(row) && runningStatuses.has(row.value.status)) {
          yield* settle(sessionId, "stopped")
        }
      })

    /** A command that expects an answer; refused when the session is not running. */
    const ask = <A>(sessionId: string, command: (reply: Deferred.Deferred<A, Conflict | EngineFailure>) => ActorCommand) =>
      Effect.gen(function*() {
        const handle = yield* handleOf(sessionId)
        if (Option.isNone(handle)) return yield* Effect.fail(notRunning(sessionId))
        const reply = yield* Deferred.make<A, Conflict | EngineFailure>()
        yield* handle.value.mailbox.offer(command(reply))
        return yield* Deferred.await(reply)
      })

    const service: SessionSupervisorService = {
      start,
      stop,
      restart: (sessionId) =>
        Effect.flatMap(handleOf(sessionId), (handle) =>
          Option.isSome(handle)
            ? Effect.asVoid(handle.value.mailbox.offer(ActorCommand.Restart()))
            : start(sessionId)),
      logout: (sessionId) =>
        Effect.gen(function*() {
          yield* sessions.update(sessionId, { desiredRunning: false })
          const wasRunning = yield* finish(sessionId, (done) => ActorCommand.Logout({ done }))
          if (!wasRunning) {
            yield* auth.forSession(sessionId).clear
            yield* sessions.update(sessionId, { phone: null, pushName: null, lid: null })
            yield* settle(sessionId, "logged_out")
          }
        }),
      remove: (sessionId) =>
        Effect.gen(function*() {
          yield* finish(sessionId, (done) => ActorCommand.Stop({ done }))
          yield* sessions.remove(sessionId)
        }),
      send: (sessionId, messageId) =>
        Effect.flatMap(handleOf(sessionId), (handle) =>
          Option.isSome(handle)
            ? handle.value.mailbox.offer(ActorCommand.Send({ messageId }))
            : Effect.succeed(false)),
      requestPairingCode: (sessionId, phoneNumber) =>
        ask(sessionId, (reply: Deferred.Deferred<string, Conflict | EngineFailure>) =>
          ActorCommand.RequestPairingCode({ phoneNumber, reply })),
      markRead: (sessionId, chatId, engineMessageIds) =>
        ask(sessionId, (reply: Deferred.Deferred<void, Conflict | EngineFailure>) =>
          ActorCommand.MarkRead({ chatId, engineMessageIds, reply })),
      state: (sessionId) =>
        Effect.flatMap(handleOf(sessionId), Option.match({
          onNone: () => Effect.succeedNone,
          onSome: (handle) => Effect.asSome(handle.state.get)
        })),
      watch: (sessionId) =>
        Stream.unwrap(Effect.map(handleOf(sessionId), Option.match({
          onNone: () => Stream.empty,
          onSome: (handle) => handle.state.changes
        }))),
      restore: Effect.gen(function*() {
        const rows = yield* sessions.listDesiredRunning()
        yield* Effect.forEach(rows, (row) => start(row.id), { discard: true })
        if (rows.length > 0) yield* Effect.logInfo(`restored ${rows.length} session(s)`)
        return rows.length
      }),
      running: Effect.map(SynchronizedRef.get(handles), (map) => Array.from(map.keys()))
    }
    return service
  })

const notRunning = (sessionId: string) =>
  new Conflict({ code: "SESSION_NOT_READY", message: `session ${sessionId} is not running; start it first` })
