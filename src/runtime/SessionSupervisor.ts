import type { StoreUnavailable } from "../domain/Errors.js"
import {
  Array as Arr,
  Cause,
  Clock,
  Context,
  DateTime,
  Deferred,
  Duration,
  Effect,
  Exit,
  FiberMap,
  Layer,
  Option,
  Ref,
  Stream,
  SynchronizedRef
} from "effect"
import { MediaStore } from "./ports/MediaStore.js"
import { MessageRepo, type MessageRow } from "./ports/store/MessageRepo.js"
import { SessionRepo, type SessionRow } from "./ports/store/SessionRepo.js"
import { Store } from "./ports/store/Store.js"
import { type EngineCallError, EngineTimeout } from "../domain/Errors.js"
import { Events } from "./Events.js"
import { makeEvent } from "../domain/makeEvent.js"
import { runningStatuses, type SessionStatus } from "../domain/Session.js"
import { Engine } from "./Engine.js"
import { yieldToEventLoop } from "./eventLoop.js"
import { applyEngineCall, type EngineCall, type EngineOperation, type EngineSuccess, requiredStatus } from "./EngineCall.js"
import { actorRestartSchedule, driverWhenNeeded } from "./ReconnectPolicy.js"
import {
  ActorCommand,
  type ActorSettings,
  type ActorState,
  makeHandle,
  runSessionActor,
  type SessionActorHandle,
  sessionNotRunning,
  unlinkSession,
  useConnection
} from "./SessionActor.js"

/** How long an actor may take to wind down after Stop/Logout before it is interrupted. */
const STOP_GRACE = "10 seconds"
/** How long a caller waits for the engine to answer a command (pairing code, receipts). */
const ENGINE_ANSWER_TIMEOUT = "30 seconds"
/** An actor that ran this long before crashing gets quick restarts again. */
const HEALTHY_RUN = Duration.minutes(5)
/**
 * How many restored sessions connect at once: thousands come back in seconds, while the API,
 * which shares the process and the Store with them, keeps answering.
 */
const RESTORE_CONCURRENCY = 64
/** Restored sessions whose stale statuses are rewritten per transaction (each holds the Store). */
const RESTORE_CHUNK = 250
/** A session that takes this long to connect no longer holds up the restore of the others. */
const RESTORE_SETTLE_WAIT_MS = 10_000

export interface SessionSupervisorService {
  /** Starts the session's actor if it is not running. Idempotent. */
  readonly start: (sessionId: string) => Effect.Effect<void, StoreUnavailable>
  /** Stops the actor (status `stopped`); the session is not restored on the next boot. */
  readonly stop: (sessionId: string) => Effect.Effect<void, StoreUnavailable>
  /** Relinks a running session from scratch, or starts a stopped one. */
  readonly restart: (sessionId: string) => Effect.Effect<void, StoreUnavailable>
  /**
   * Ends the session's actor here without changing what the session wants: in a cluster, its
   * shard moved to another runner, which takes the session over.
   */
  readonly release: (sessionId: string) => Effect.Effect<void>
  /** Unlinks the account and wipes its credentials (status `logged_out`). */
  readonly logout: (sessionId: string) => Effect.Effect<void, StoreUnavailable>
  /** Logs the session out, and removes it with everything the gateway and the engine keep. */
  readonly remove: (sessionId: string) => Effect.Effect<void, StoreUnavailable>
  /**
   * Hands a stored `pending` message to the session's actor. False when it is not running:
   * the message then waits in the Store and goes out when the session is started.
   */
  readonly send: (sessionId: string, messageId: string, row?: MessageRow) => Effect.Effect<boolean>
  /**
   * Runs an engine call on the session's connection once it is in the status the operation
   * needs (else SESSION_NOT_READY): a pairing code while `qr_ready`, the rest while `ready`.
   */
  readonly useConnection: <Op extends EngineOperation>(
    sessionId: string,
    call: EngineCall<Op>
  ) => Effect.Effect<EngineSuccess<Op>, EngineCallError | EngineTimeout>
  /**
   * The accepted sends of a running session that have not gone out yet: those in its outbound
   * lane (held by the pacing or going out) and those handed over but not yet taken from its
   * mailbox. None when its actor does not run (its sends then wait in the Store). A supervisor
   * that counts another process's actors may answer from a recent figure unless `fresh`.
   */
  readonly backlog: (sessionId: string, options?: { readonly fresh?: boolean }) => Effect.Effect<Option.Option<number>>
  /** The live state of a running session. */
  readonly state: (sessionId: string) => Effect.Effect<Option.Option<ActorState>>
  /** The live state of a running session and its changes; empty when it is not running. */
  readonly watch: (sessionId: string) => Stream.Stream<ActorState>
  /** Starts every session that was running when the gateway last stopped (and is not running yet); how many should run. */
  readonly restore: Effect.Effect<number, StoreUnavailable>
  /** Sessions the restore under way has yet to bring up (0 when none is under way). */
  readonly restoring: Effect.Effect<number>
  /** Ids of the sessions whose actors are alive. */
  readonly running: Effect.Effect<ReadonlyArray<string>>
  /** Commands waiting in each running session's mailbox, by session id (for the metrics). */
  readonly mailboxDepths: Effect.Effect<ReadonlyMap<string, number>>
  /**
   * What ready sessions have yet to send, for a graceful shutdown: `queued`, the sends in their
   * lanes (held by the pacing, going out, or just handed over); `unacknowledged`, every accepted
   * send the network has not acknowledged yet (`pending` in the Store). Other sessions' sends
   * wait in the Store until those sessions are ready again.
   */
  readonly outgoing: Effect.Effect<{ readonly queued: number; readonly unacknowledged: number }, StoreUnavailable>
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
  static readonly layer = (settings: ActorSettings) => Layer.scoped(SessionSupervisor, makeSessionSupervisor(settings))
}

/** Commands waiting in an actor's mailbox (sends handed over but not yet in its lane, mostly). */
const mailboxDepth = (handle: SessionActorHandle) => Option.getOrElse(handle.mailbox.unsafeSize(), () => 0)

/** The supervisor of the actors of this process. */
export const makeSessionSupervisor = (settings: ActorSettings) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Engine | Effect.Effect.Context<ReturnType<typeof runSessionActor>>>()
    const sessions = yield* SessionRepo
    const events = yield* Events
    const engine = yield* Engine
    const mediaStore = yield* MediaStore
    const messages = yield* MessageRepo
    const transactionally = (yield* Store).transactionally
    const fibers = yield* FiberMap.make<string>()
    /**
     * The handles of the running actors. One Map, changed in place under the SynchronizedRef
     * (which serialises the changes): a copy per start would cost O(n²) over a restore of
     * thousands. Readers take it as it is at that moment, as they would a snapshot.
     */
    const handles = yield* SynchronizedRef.make(new Map<string, SessionActorHandle>())

    const handleOf = (sessionId: string) => Effect.map(SynchronizedRef.get(handles), (map) => Option.fromNullable(map.get(sessionId)))

    const forget = (handle: SessionActorHandle) =>
      SynchronizedRef.update(handles, (map) => {
        if (map.get(handle.sessionId) === handle) map.delete(handle.sessionId)
        return map
      })

    /**
     * A crash shows on the session itself (stored and in the live state), not only in the log.
     * Storing it is best effort: a Store that is down must not end the supervision.
     */
    const recordCrash = (handle: SessionActorHandle, cause: Cause.Cause<unknown>) =>
      Effect.gen(function*() {
        yield* Effect.logError("session actor crashed; restarting", cause)
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        const message = Cause.pretty(cause).split("\n")[0] ?? "unknown defect"
        const lastError = { code: "ACTOR_CRASHED", message, at }
        yield* handle.state.update((state) => ({ ...state, lastError }))
        yield* sessions.update(handle.sessionId, { lastError }).pipe(
          Effect.catchTag("StoreUnavailable", (outage) => Effect.logWarning("the crash could not be stored", outage.message))
        )
      })

    /**
     * Runs the actor until it ends on its own; a crash (a defect, never an interruption)
     * restarts it with backoff, and a crash after a long healthy run restarts it quickly.
     */
    const supervise = (handle: SessionActorHandle, startedFrom?: SessionRow) =>
      Effect.gen(function*() {
        const backoff = driverWhenNeeded(() => actorRestartSchedule)
        while (true) {
          const startedAt = yield* Clock.currentTimeMillis
          const exit = yield* Effect.exit(runSessionActor(handle, settings, startedFrom))
          // A restarted actor reads its row afresh.
          startedFrom = undefined
          if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return
          yield* recordCrash(handle, exit.cause)
          if ((yield* Clock.currentTimeMillis) - startedAt >= Duration.toMillis(HEALTHY_RUN)) yield* backoff.reset
          yield* backoff.next(undefined)
        }
      }).pipe(Effect.ensuring(forget(handle)))

    /**
     * Starts the actor's fiber. It runs on the supervisor's own services, not merged with the
     * caller's (a request, the restore): one context shared by every actor instead of a merged
     * copy held by each. Given to the fork rather than provided inside the actor, where it would
     * hold frames on the fiber's stack for as long as the session runs.
     */
    const runActor = (handle: SessionActorHandle, startedFrom: SessionRow) =>
      FiberMap.run(fibers, handle.sessionId, supervise(handle, startedFrom)).pipe(
        Effect.mapInputContext((_: Context.Context<never>) => context)
      )

    const start = (sessionId: string) =>
      SynchronizedRef.updateEffect(handles, (map) =>
        Effect.gen(function*() {
          if (map.has(sessionId)) return map
          const row = yield* sessions.findById(sessionId)
          if (Option.isNone(row)) return map
          yield* sessions.update(sessionId, { desiredRunning: true })
          const handle = yield* makeHandle(sessionId, row.value.status, row.value.lastError)
          yield* runActor(handle, row.value)
          return map.set(sessionId, handle)
        }))

    const restoreRemaining = yield* Ref.make(0)
    /** Sessions stopped, logged out or removed while a restore is under way: it must not start them. */
    const withdrawn = new Set<string>()
    let restoreUnderWay = false
    const withdraw = (sessionId: string) => Effect.sync(() => void (restoreUnderWay && withdrawn.add(sessionId)))

    /**
     * The statuses stored for the sessions being restored were true when the gateway stopped,
     * not now: each is `initializing` until its actor connects. Written (with the events) many
     * sessions per transaction, where each actor would otherwise write its own. The event loop
     * runs between two transactions: back to back, the 20 of 5,000 sessions held off the API's
     * requests, health included, for over a second after it started listening.
     */
    const markInitializing = (rows: ReadonlyArray<SessionRow>) =>
      Effect.forEach(Arr.chunksOf(rows.filter((row) => row.status !== "initializing"), RESTORE_CHUNK), (chunk) =>
        Effect.gen(function*() {
          yield* yieldToEventLoop
          const at = yield* DateTime.nowAsDate
          yield* transactionally(Effect.zipRight(
            sessions.setStatusOfMany(chunk.map((row) => row.id), "initializing"),
            events.publishAll(chunk.map((row) =>
              makeEvent("session.status", row.id, { status: "initializing", previousStatus: row.status, reason: null }, at)))
          ))
        }), { discard: true })

    /**
     * The restored sessions still connecting, each with what ends its wait. One observer of the
     * status events serves them all: a subscription to each session's state, with its timeout
     * fiber, cost more than the rest of a session's restore.
     */
    const connecting = new Map<string, Deferred.Deferred<void>>()
    yield* events.observeLocal((event) => {
      if (event.event !== "session.status") return
      // The data of a `session.status` event (see domain/Events.ts).
      const { status } = event.data as { readonly status: SessionStatus }
      const waiting = connecting.get(event.sessionId)
      if (waiting !== undefined && status !== "initializing") Deferred.unsafeDone(waiting, Exit.void)
    })

    /**
     * Starts a session from its stored row (no read, no write of its own), and waits until it
     * is past connecting (ready, showing a QR, disconnected, ended: its status is no longer
     * `initializing`) or has had its time.
     */
    const startRestored = (row: SessionRow) =>
      Effect.gen(function*() {
        const handle = yield* SynchronizedRef.modifyEffect(handles, (map) =>
          map.has(row.id) || withdrawn.has(row.id)
            ? Effect.succeed([Option.none<SessionActorHandle>(), map] as const)
            : Effect.map(makeHandle(row.id, "initializing", row.lastError), (made) =>
              [Option.some(made), map.set(row.id, made)] as const))
        if (Option.isNone(handle)) return
        // Waiting before the actor starts: its first status change cannot come too early.
        const pastConnecting = yield* Deferred.make<void>()
        connecting.set(row.id, pastConnecting)
        const timer = setTimeout(() => Deferred.unsafeDone(pastConnecting, Exit.void), RESTORE_SETTLE_WAIT_MS)
        yield* runActor(handle.value, row)
        yield* Deferred.await(pastConnecting).pipe(Effect.ensuring(Effect.sync(() => {
          clearTimeout(timer)
          connecting.delete(row.id)
        })))
      })

    /**
     * Asks the actor to finish with a command and waits for it, interrupting it if it hangs.
     * True when the actor carried the command out; false when there was no actor to do it.
     */
    const finish = (sessionId: string, command: (done: Deferred.Deferred<boolean>) => ActorCommand) =>
      Effect.gen(function*() {
        const handle = yield* handleOf(sessionId)
        if (Option.isNone(handle)) return false
        const done = yield* Deferred.make<boolean>()
        const accepted = yield* handle.value.mailbox.offer(command(done))
        const carriedOut = accepted && (yield* Deferred.await(done).pipe(Effect.timeoutTo({
          duration: STOP_GRACE,
          onSuccess: (result) => result,
          onTimeout: () => false
        })))
        yield* FiberMap.remove(fibers, sessionId)
        yield* forget(handle.value)
        return carriedOut
      })

    /** For a session with no live actor: record the status it ends in, if it changed. */
    const settle = (sessionId: string, status: SessionStatus) =>
      Effect.gen(function*() {
        const row = yield* sessions.findById(sessionId)
        if (Option.isNone(row) || row.value.status === status) return
        const at = yield* DateTime.nowAsDate
        yield* transactionally(Effect.zipRight(
          sessions.update(sessionId, { status }),
          events.publish(makeEvent("session.status", sessionId, { status, previousStatus: row.value.status, reason: null }, at))
        ))
      })

    const stop = (sessionId: string) =>
      Effect.gen(function*() {
        yield* withdraw(sessionId)
        yield* sessions.update(sessionId, { desiredRunning: false })
        if (yield* finish(sessionId, (done) => ActorCommand.Stop({ done }))) return
        // No actor did it (none, or it hung): a session left in a running status is stopped
        // now; terminal ones (failed, logged_out) stay as they are.
        const row = yield* sessions.findById(sessionId)
        if (Option.isSome(row) && runningStatuses.has(row.value.status)) yield* settle(sessionId, "stopped")
      })

    const logout = (sessionId: string) =>
      Effect.gen(function*() {
        yield* withdraw(sessionId)
        yield* sessions.update(sessionId, { desiredRunning: false })
        if (yield* finish(sessionId, (done) => ActorCommand.Logout({ done }))) return
        yield* Effect.provide(unlinkSession(sessionId), context)
        yield* settle(sessionId, "logged_out")
      })

    /** A command that expects an answer: refused when the session is not running, bounded in time. */
    const ask = <A>(sessionId: string, command: (reply: Deferred.Deferred<A, EngineCallError>) => ActorCommand) =>
      Effect.gen(function*() {
        const handle = yield* handleOf(sessionId)
        const reply = yield* Deferred.make<A, EngineCallError>()
        const accepted = Option.isSome(handle) && (yield* handle.value.mailbox.offer(command(reply)))
        if (!accepted) return yield* Effect.fail(sessionNotRunning)
        return yield* Deferred.await(reply).pipe(Effect.timeoutFail({
          duration: ENGINE_ANSWER_TIMEOUT,
          onTimeout: () => new EngineTimeout({ code: "ENGINE_TIMEOUT", message: `the engine did not answer within ${ENGINE_ANSWER_TIMEOUT}` })
        }))
      })

    const service: SessionSupervisorService = {
      start: Effect.fn("SessionSupervisor.start")(start),
      stop: Effect.fn("SessionSupervisor.stop")(stop),
      restart: Effect.fn("SessionSupervisor.restart")((sessionId: string) =>
        Effect.flatMap(handleOf(sessionId), (handle) =>
          Option.isSome(handle)
            ? Effect.asVoid(handle.value.mailbox.offer(ActorCommand.Restart()))
            : start(sessionId))),
      release: Effect.fn("SessionSupervisor.release")((sessionId: string) =>
        Effect.flatMap(handleOf(sessionId), (handle) =>
          Option.isSome(handle) ? Effect.zipRight(FiberMap.remove(fibers, sessionId), forget(handle.value)) : Effect.void)),
      logout: Effect.fn("SessionSupervisor.logout")(logout),
      remove: Effect.fn("SessionSupervisor.remove")((sessionId: string) =>
        Effect.gen(function*() {
          yield* logout(sessionId)
          yield* engine.forget(sessionId)
          yield* sessions.remove(sessionId)
          // After the rows: a message never outlives its media. A failure leaves files, not broken rows.
          yield* mediaStore.removeAll(sessionId).pipe(
            Effect.catchAll((error) => Effect.logWarning("the media of a deleted session could not be removed", error.message))
          )
        })),
      // No span: a hand-over to a mailbox, on every send (a span costs more than the hand-over).
      send: (sessionId: string, messageId: string, row?: MessageRow) =>
        Effect.flatMap(handleOf(sessionId), (handle) =>
          Option.isSome(handle)
            ? handle.value.mailbox.offer(ActorCommand.Send({ messageId, row }))
            : Effect.succeed(false)),
      backlog: (sessionId) =>
        Effect.flatMap(handleOf(sessionId), Option.match({
          onNone: () => Effect.succeedNone,
          onSome: (handle) => Effect.map(Ref.get(handle.queuedSends), (queued) => Option.some(queued + mailboxDepth(handle)))
        })),
      useConnection: (sessionId, call) =>
        ask(sessionId, (reply) => useConnection(requiredStatus(call.operation), (connection) => applyEngineCall(connection, call), reply)),
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
        restoreUnderWay = true
        const running = yield* SynchronizedRef.get(handles)
        const wanted = yield* sessions.listDesiredRunning()
        const rows = wanted.filter((row) => !running.has(row.id))
        yield* Ref.set(restoreRemaining, rows.length)
        yield* markInitializing(rows)
        yield* Effect.forEach(rows, (row) =>
          yieldToEventLoop.pipe(
            Effect.zipRight(startRestored(row)),
            Effect.ensuring(Ref.update(restoreRemaining, (n) => n - 1))
          ), {
          concurrency: RESTORE_CONCURRENCY,
          discard: true
        })
        if (rows.length > 0) yield* Effect.logInfo(`restored ${rows.length} session(s)`)
        return wanted.length
      }).pipe(
        Effect.ensuring(Effect.zipRight(Ref.set(restoreRemaining, 0), Effect.sync(() => {
          restoreUnderWay = false
          withdrawn.clear()
        }))),
        Effect.withSpan("SessionSupervisor.restore")
      ),
      restoring: Ref.get(restoreRemaining),
      running: Effect.map(SynchronizedRef.get(handles), (map) => Array.from(map.keys())),
      mailboxDepths: Effect.map(SynchronizedRef.get(handles), (map) =>
        new Map(Array.from(map, ([sessionId, handle]) => [sessionId, mailboxDepth(handle)]))),
      outgoing: Effect.gen(function*() {
        const ready: Array<string> = []
        let queued = 0
        // A copy: the map changes while this waits on the actors' states.
        for (const handle of Array.from((yield* SynchronizedRef.get(handles)).values())) {
          if ((yield* handle.state.get).status !== "ready") continue
          ready.push(handle.sessionId)
          queued += (yield* Ref.get(handle.queuedSends)) + mailboxDepth(handle)
        }
        return { queued, unacknowledged: yield* messages.countUnsent(ready) }
      }).pipe(Effect.withSpan("SessionSupervisor.outgoing"))
    }
    return service
  })
