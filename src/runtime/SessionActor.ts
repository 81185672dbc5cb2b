import { Cause, Clock, Data, DateTime, Deferred, Duration, Effect, Exit, Fiber, FiberRef, HashMap, Mailbox, Option, Ref, Scope } from "effect"
import { MediaStore } from "./ports/MediaStore.js"
import { AuthRepo } from "./ports/store/AuthRepo.js"
import { MessageRepo, type MessageRow } from "./ports/store/MessageRepo.js"
import { untilStoreIsBack } from "./storeOutage.js"
import { SessionRepo, type SessionRow } from "./ports/store/SessionRepo.js"
import { GroupCommit } from "./ports/store/GroupCommit.js"
import { Conflict, type EngineCallError, toApiError } from "../domain/Errors.js"
import { Events } from "./Events.js"
import { makeEvent } from "../domain/makeEvent.js"
import { type LastError, runningStatuses, type SessionStatus } from "../domain/Session.js"
import type { CloseReason, EngineConnection, EngineError, EngineEvent } from "./Engine.js"
import { Engine } from "./Engine.js"
import { handleEngineEvent, type IncomingMediaSettings, type Receipt, receiptChanges } from "./InboundEvents.js"
import { makeOutbound, type Outbound } from "./OutboundSender.js"
import { makeReadyConnection } from "./ReadyConnection.js"
import { makeWatchedState, type WatchedState } from "./WatchedState.js"
import type { PacingSettings } from "../domain/Settings.js"
import { driverWhenNeeded, reconnectSchedule } from "./ReconnectPolicy.js"
import { announcedInstability, type Disconnect, ReconnectWindow, unstableError } from "./Instability.js"
import { settingsOrDefault } from "../domain/SessionSettings.js"
import { type ReconnectSettings } from "../domain/Settings.js"

/**
 * The most receipts one transaction takes: a reconnect can hand over thousands at once, and a
 * transaction holds the connection (SQLite's only one) while it runs.
 */
const RECEIPTS_PER_TRANSACTION = 256

/** What the rest of the gateway may observe of a running session. */
export interface ActorState {
  readonly status: SessionStatus
  readonly qr: Option.Option<{ readonly qr: string; readonly expiresAt: Date }>
  readonly lastError: LastError | null
}

export type ActorCommand = Data.TaggedEnum<{
  /**
   * A stored `pending` message is waiting to go out; `row` is the message as stored, when the
   * sender has it in hand (the lane then does not read it back), absent from a cluster peer.
   */
  Send: { readonly messageId: string; readonly row?: MessageRow | undefined }
  /** Drop the connection and link again from scratch, without passing through `stopped`. */
  Restart: {}
  /** `done` tells whether this actor carried it out (false: it had already ended). */
  Stop: { readonly done: Deferred.Deferred<boolean> }
  Logout: { readonly done: Deferred.Deferred<boolean> }
  /**
   * An engine call on the open connection (pairing code, read receipts, reactions…), answered
   * through `reply`; refused with SESSION_NOT_READY unless the session is in `required`.
   */
  UseConnection: {
    readonly required: SessionStatus
    /**
     * Runs the call on the connection (or fails as `connection` does) and hands the outcome
     * to the caller. Made by `useConnection`, which alone knows the answer's type: the
     * mailbox is not generic.
     */
    readonly answer: (connection: Effect.Effect<EngineConnection, Conflict>) => Effect.Effect<void>
  }
  /** Internal: the link loop reached a terminal status (generation guards against stale news). */
  LinkEnded: { readonly generation: number }
  /** Internal: a child fiber died of a defect; the actor dies with it, so the supervisor restarts it. */
  ChildCrashed: { readonly cause: Cause.Cause<never> }
}>
export const ActorCommand = Data.taggedEnum<ActorCommand>()

/** An engine call for the actor to run once the session is `required`, answered through `reply`. */
export const useConnection = <A>(
  required: SessionStatus,
  use: (connection: EngineConnection) => Effect.Effect<A, EngineError>,
  reply: Deferred.Deferred<A, EngineCallError>
): ActorCommand =>
  ActorCommand.UseConnection({
    required,
    answer: (connection) =>
      Effect.asVoid(Effect.intoDeferred(Effect.flatMap(connection, (open) => Effect.mapError(use(open), toApiError)), reply))
  })

/**
 * The identity of a session process: its mailbox and observable state. They outlive a crash
 * of the actor's fiber, so a restarted actor picks up where the old one left off.
 */
export interface SessionActorHandle {
  readonly sessionId: string
  readonly mailbox: Mailbox.Mailbox<ActorCommand>
  readonly state: WatchedState<ActorState>
  /** Accepted sends waiting in the outbound lane (the one going out included). */
  readonly queuedSends: Ref.Ref<number>
}

export const makeHandle = (sessionId: string, status: SessionStatus, lastError: LastError | null) =>
  Effect.gen(function*() {
    return {
      sessionId,
      mailbox: yield* Mailbox.make<ActorCommand>(),
      state: makeWatchedState<ActorState>({ status, qr: Option.none(), lastError }),
      queuedSends: yield* Ref.make(0)
    } satisfies SessionActorHandle
  })

interface LinkOutcome {
  readonly reason: CloseReason
  readonly reachedReady: boolean
  /** Stayed ready for `healthyAfter`: the reconnect budget is earned back. */
  readonly wasHealthy: boolean
}

/**
 * How many immediate reconnects a server may ask for in a row (without the session reaching
 * ready in between) before they count as failures.
 */
const MAX_IMMEDIATE_RESTARTS = 3

/** How every session process behaves: its reconnect policy, its send pacing, incoming media. */
export interface ActorSettings {
  readonly reconnect: ReconnectSettings
  readonly pacing: PacingSettings
  readonly media: IncomingMediaSettings
}

/**
 * One session's process. Reads commands from its mailbox; a child fiber owns the engine
 * connection and reconnects on the backoff schedule; another sends queued messages when the
 * session is ready. Returns when the session reaches a status in which it no longer runs
 * (`stopped`, `logged_out`, `failed`). Every status change is persisted, then published.
 */
export const runSessionActor = (
  handle: SessionActorHandle,
  { media, pacing, reconnect }: ActorSettings,
  /**
   * The session's row as whoever started the actor just read it (a restore reads them all at
   * once): its first connection takes the proxy and settings from it instead of reading it
   * again. Later connections (a reconnect, a Restart) read it afresh.
   */
  startedFrom?: SessionRow
) =>
  withOwnScope((actorScope) => Effect.gen(function*() {
    const { sessionId, mailbox, state, queuedSends } = handle
    // Set on the actor's fiber (its children inherit it) rather than around the actor: the
    // same, without the frames `annotateLogs` would hold on the stack for as long as the
    // session runs. Nothing to restore: the fiber is the session's, whatever runs it again.
    yield* FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set("sessionId", sessionId as unknown))
    const engine = yield* Engine
    const sessions = yield* SessionRepo
    const messages = yield* MessageRepo
    const events = yield* Events
    const groupCommit = yield* GroupCommit
    const auth = (yield* AuthRepo).forSession(sessionId)
    /** The open connection, ready or not (pairing codes and logout need it early). */
    const connection = yield* Ref.make(Option.none<EngineConnection>())
    /** The connection while it is ready: what the outbound lane waits for. */
    const readyConnection = makeReadyConnection()

    /**
     * Receipts that came together, group committed: a chunk shares its commit with the writes
     * that come meanwhile (accepted sends, audit records), and while it waits for its batch the
     * next chunk grows, so the receipts keep up (issue 19).
     */
    const applyReceipts = (receipts: ReadonlyArray<Receipt>) => groupCommit.write(receiptChanges(messages, events, sessionId, receipts))

    const lookupSent = (engineMessageId: string) =>
      Effect.map(
        untilStoreIsBack(messages.findByEngineId(sessionId, engineMessageId), "looking up a sent message"),
        Option.flatMap((row) =>
          row.fromMe && row.type === "text" && row.text !== null ? Option.some({ chatId: row.chatId, text: row.text }) : Option.none()
        )
      )

    const lookupPoll = (engineMessageId: string) =>
      Effect.map(
        untilStoreIsBack(messages.findByEngineId(sessionId, engineMessageId), "looking up a poll"),
        Option.flatMap(({ chatId, from, fromMe, poll }) =>
          poll === null
            ? Option.none()
            : Option.some({
              chatId,
              from,
              fromMe,
              name: poll.name,
              options: poll.options,
              selectableCount: poll.selectableCount,
              secret: poll.secret === null ? null : Buffer.from(poll.secret, "base64")
            })
        )
      )

    const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

    /** The status is written (with its event) before the actor goes on: it waits for the Store if need be. */
    const setStatus = (next: SessionStatus, error?: Omit<LastError, "at">, disconnect?: Disconnect): Effect.Effect<void> =>
      untilStoreIsBack(recordStatus(next, error, disconnect), `recording the status ${next}`)

    const recordStatus = (next: SessionStatus, error?: Omit<LastError, "at">, disconnect?: Disconnect) =>
      Effect.gen(function*() {
        const previous = yield* state.get
        if (previous.status === next && error === undefined) return
        const lastError = error === undefined ? previous.lastError : { ...error, at: yield* nowIso }
        // A session that ends (stopped, logged out, failed) stays ended across reboots.
        const ended = runningStatuses.has(next) ? {} : { desiredRunning: false }
        const at = yield* DateTime.nowAsDate
        const reason = disconnect?.cause ?? error?.code ?? null
        // Another failed attempt in the same status records its error but is no new event.
        const announced = [
          ...(previous.status === next ? [] : [makeEvent("session.status", sessionId, { status: next, previousStatus: previous.status, reason }, at)]),
          ...announcedInstability(sessionId, disconnect, at)
        ]
        // Group committed: when a restart brings thousands of sessions back, their status
        // changes share transactions instead of each taking the Store for one of its own.
        yield* groupCommit.write(Effect.zipRight(
          sessions.patch(sessionId, { status: next, lastError, ...ended }),
          announced.length === 0 ? Effect.void : events.publishAll(announced)
        ))
        yield* state.set({
          status: next,
          qr: next === "qr_ready" ? previous.qr : Option.none(),
          lastError
        })
      })

    const onEvent = (conn: EngineConnection, readySince: Ref.Ref<Option.Option<number>>, linkedFrom: Option.Option<SessionRow>) => (event: EngineEvent) =>
      handleEngineEvent(event, {
        sessionId,
        linkedFrom,
        media,
        downloadMedia: conn.downloadMedia,
        setStatus,
        showQr: (qr) =>
          Effect.zipRight(
            state.update((s) => ({ ...s, qr: Option.some(qr) })),
            Effect.zipRight(
              setStatus("qr_ready"),
              Effect.flatMap(DateTime.nowAsDate, (at) =>
                events.publish(makeEvent("session.qr", sessionId, { qr: qr.qr, expiresAt: qr.expiresAt.toISOString() }, at)))
            )
          ),
        markReady: Effect.all([
          Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(readySince, Option.some(now))),
          setStatus("ready"),
          readyConnection.set(Option.some(conn))
        ], { discard: true }),
        rejectCall: (callId, from) => conn.calls.reject(callId, from),
        setOnline: conn.presence.set({ state: "online" }),
        // The lane is made below, before the first connection: events come only once it exists.
        queueSend: (row) => outbound.enqueue(row.id, row),
        newMessageId: engine.newMessageId
      })

    /** One connection, from connect to close. Never fails: a failed connect is an outcome too. */
    const linkOnce = withOwnScope((linkScope) =>
      Effect.gen(function*() {
        const row = startedFrom === undefined
          ? yield* untilStoreIsBack(sessions.findById(sessionId), "reading the session's proxy and settings")
          : Option.some(startedFrom)
        startedFrom = undefined
        const proxyUrl = Option.flatMapNullable(row, (session) => session.proxyUrl)
        const settings = settingsOrDefault(Option.getOrNull(row)?.settings ?? null)
        const connected = yield* Effect.either(
          Scope.extend(engine.connect({ sessionId, auth, proxyUrl, lookupSent, lookupPoll, settings }), linkScope)
        )
        if (connected._tag === "Left") {
          const { code, message, transient } = connected.left
          return { reason: { kind: transient ? "retry" : "fatal", code, message }, reachedReady: false, wasHealthy: false } as const
        }
        const conn = connected.right
        // Published at once: pairing codes and logout need the connection before it is ready.
        yield* Ref.set(connection, Option.some(conn))
        yield* Scope.addFinalizer(linkScope, Effect.zipRight(Ref.set(connection, Option.none()), readyConnection.set(Option.none())))
        const readySince = yield* Ref.make(Option.none<number>())
        let reason: CloseReason = { kind: "retry", code: "CONNECTION_ENDED", message: "the connection ended without a reason" }
        const handle = onEvent(conn, readySince, row)
        /**
         * The events waiting when the consumer comes round, in order up to `Closed`: receipts
         * next to each other go in one transaction (see `applyReceipts`), anything else alone.
         * False once the connection has ended.
         */
        const handleEvents = (events: ReadonlyArray<EngineEvent>) =>
          Effect.suspend(() => {
            // Receipts in a row become one array; any other event stays as it is.
            const units: Array<Array<Receipt> | EngineEvent> = []
            let open = events.length > 0
            for (const event of events) {
              if (event._tag === "Closed") {
                reason = event.reason
                open = false
                break
              }
              const last = units[units.length - 1]
              if (event._tag !== "MessageStatusChanged") units.push(event)
              else if (Array.isArray(last) && last.length < RECEIPTS_PER_TRANSACTION) last.push(event)
              else units.push([event])
            }
            // Each unit acknowledged once stored, not before: what the network counts as
            // delivered must survive a kill (issue 21).
            return Effect.as(
              Effect.forEach(units, (unit) =>
                Array.isArray(unit)
                  ? Effect.zipRight(untilStoreIsBack(applyReceipts(unit), "receipts from the network"), conn.acknowledge(unit))
                  : Effect.zipRight(untilStoreIsBack(handle(unit), "an event from the network"), conn.acknowledge([unit])), { discard: true }),
              open
            )
          })
        // A plain loop, for a session idles in it while connected: no stream machinery per session.
        while (yield* Effect.flatMap(conn.takeEvents, handleEvents)) {
          // handleEvents did the work
        }
        const since = yield* Ref.get(readySince)
        const now = yield* Clock.currentTimeMillis
        const wasHealthy = Option.isSome(since) && now - since.value >= Duration.toMillis(reconnect.healthyAfter)
        return { reason, reachedReady: Option.isSome(since), wasHealthy } satisfies LinkOutcome
      })
    )

    /** Links, and relinks on the schedule, until a terminal outcome. */
    const linkLoop = Effect.gen(function*() {
      const driver = driverWhenNeeded(() => reconnectSchedule(reconnect))
      let immediateRestarts = 0
      /** This link loop's reconnects, for telling an unstable session (see `Instability.ts`). */
      let reconnects: ReconnectWindow | undefined
      yield* setStatus("initializing")
      while (true) {
        const { reachedReady, reason, wasHealthy } = yield* linkOnce
        const error = { code: reason.code, message: reason.message }
        if (reachedReady) immediateRestarts = 0
        if (reason.kind === "logged_out") {
          yield* untilStoreIsBack(unlinkSession(sessionId), "unlinking the session")
          return yield* setStatus("logged_out", error)
        }
        if (reason.kind === "fatal") return yield* setStatus("failed", error)
        if (reason.kind === "restart" && ++immediateRestarts <= MAX_IMMEDIATE_RESTARTS) continue
        immediateRestarts = 0
        if (wasHealthy) yield* driver.reset
        const stability = (reconnects ??= new ReconnectWindow()).record(yield* Clock.currentTimeMillis)
        yield* setStatus("disconnected", stability.unstable ? unstableError(stability.reconnects, error) : error, { cause: error.code, stability })
        const exhausted = yield* driver.next(undefined).pipe(Effect.as(false), Effect.orElseSucceed(() => true))
        if (exhausted) {
          return yield* setStatus("failed", {
            code: "RECONNECT_EXHAUSTED",
            message: `gave up after ${reconnect.maxAttempts} reconnect attempts (last: ${reason.code}: ${reason.message})`
          })
        }
      }
    })

    /**
     * Forks a child in the actor's scope. Children are forked, so a defect in one would go
     * unnoticed: it is reported to the actor, and so is `ended` when the child returns. By an
     * observer of the fiber rather than a wrapper around the child, which would hold frames on
     * its stack for as long as it runs (the link's runs as long as the session).
     */
    const forkChild = <A, R>(child: Effect.Effect<A, never, R>, ended?: () => ActorCommand) =>
      Effect.tap(Effect.forkIn(child, actorScope), (fiber) =>
        Effect.sync(() =>
          fiber.addObserver((exit) => {
            if (Exit.isSuccess(exit)) {
              if (ended !== undefined) mailbox.unsafeOffer(ended())
            } else if (!Cause.isInterruptedOnly(exit.cause)) {
              mailbox.unsafeOffer(ActorCommand.ChildCrashed({ cause: exit.cause }))
            }
          })
        ))

    const mediaStore = yield* MediaStore
    const laneContext = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof makeOutbound>>>()
    // A function, not an effect made up front: most sessions never make their lane.
    const makeLane = () => Effect.provide(makeOutbound({ sessionId, readyConnection, messages, pacing, mediaStore, queuedSends }), laneContext)
    // A lane restarted after a crash starts empty; the unsent messages are queued again below.
    yield* Ref.set(queuedSends, 0)
    let lane: Outbound | undefined
    /**
     * The lane is made, and its fiber started in the actor's scope, with the first message to
     * send (a message may come from the link's fiber): most sessions are idle, and a lane (its
     * closures, its pacer) and a fiber waiting on it are memory held for nothing, per session.
     */
    const outbound = {
      enqueue: (messageId: string, row?: MessageRow) =>
        Effect.suspend(() =>
          lane !== undefined
            ? lane.enqueue(messageId, row)
            : Effect.flatMap(makeLane(), (made) => {
              // Another fiber may have made it meanwhile: there is one lane.
              if (lane !== undefined) return lane.enqueue(messageId, row)
              lane = made
              return Effect.zipRight(forkChild(made.run), made.enqueue(messageId, row))
            })
        )
    }
    for (const row of yield* untilStoreIsBack(messages.listUnsent(sessionId), "finding the unsent messages")) yield* outbound.enqueue(row.id, row)

    /**
     * Runs an engine call that needs the connection in a given status and answers the caller,
     * without holding up the mailbox while the engine works.
     */
    const answerWithConnection = (
      required: SessionStatus,
      answer: (connection: Effect.Effect<EngineConnection, Conflict>) => Effect.Effect<void>
    ) =>
      Effect.gen(function*() {
        const conn = yield* Ref.get(connection)
        const { status } = yield* state.get
        const usable = Option.isNone(conn) || status !== required
          ? Effect.fail(new Conflict({ code: "SESSION_NOT_READY", message: `the session is ${status}; this needs it ${required}` }))
          : Effect.succeed(conn.value)
        yield* Effect.forkIn(answer(usable), actorScope)
      })

    let generation = 0
    const startLink = Effect.suspend(() => {
      const started = ++generation
      return forkChild(linkLoop, () => ActorCommand.LinkEnded({ generation: started }))
    })
    let link = yield* startLink

    const commandLoop = Effect.gen(function*() {
    while (true) {
      const command = yield* mailbox.take.pipe(Effect.orElseSucceed(() => ActorCommand.LinkEnded({ generation })))
      switch (command._tag) {
        case "Send":
          yield* outbound.enqueue(command.messageId, command.row)
          break
        case "UseConnection":
          yield* answerWithConnection(command.required, command.answer)
          break
        case "Restart":
          yield* Fiber.interrupt(link)
          link = yield* startLink
          break
        case "Stop":
          yield* Fiber.interrupt(link)
          yield* setStatus("stopped")
          return yield* Deferred.succeed(command.done, true)
        case "Logout": {
          const conn = yield* Ref.get(connection)
          if (Option.isSome(conn)) yield* Effect.ignore(Effect.timeout(conn.value.logout, "5 seconds"))
          yield* Fiber.interrupt(link)
          yield* untilStoreIsBack(unlinkSession(sessionId), "unlinking the session")
          yield* setStatus("logged_out")
          return yield* Deferred.succeed(command.done, true)
        }
        case "LinkEnded":
          if (command.generation === generation) return
          break
        case "ChildCrashed":
          return yield* Effect.failCause(command.cause)
      }
    }
    })

    yield* commandLoop
    yield* refuseRemaining(mailbox)
  }))

/**
 * `Effect.scoped` for the long-lived: `use` gets the scope as an argument and runs without it
 * in its context. `Effect.scoped` adds the scope to a copy of the context (all the services of
 * the gateway, ~1.8 KB) and holds that copy, with the frames that provide it, on the fiber's
 * stack for as long as `use` runs: for a session's actor and its connection, as long as the
 * session runs (issue 19: memory per idle session).
 */
const withOwnScope = <A, E, R>(use: (scope: Scope.Scope) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Scope.make(), (scope) => Effect.onExit(use(scope), (exit) => Scope.close(scope, exit)))

/** The account is no longer linked: its credentials and the identity they carried are gone. */
export const unlinkSession = (sessionId: string) =>
  Effect.gen(function*() {
    yield* (yield* AuthRepo).forSession(sessionId).clear
    yield* (yield* SessionRepo).update(sessionId, { phone: null, pushName: null, lid: null })
  })

/**
 * The actor has ended: no command can reach it any more, and whoever still waits on one
 * gets an answer now rather than never. Queued sends stay `pending` in the Store and go
 * out when the session is started again.
 */
const refuseRemaining = (mailbox: Mailbox.Mailbox<ActorCommand>) =>
  Effect.gen(function*() {
    yield* mailbox.end
    const [pending] = yield* mailbox.takeAll
    yield* Effect.forEach(pending, (command) => {
      switch (command._tag) {
        case "Stop":
        case "Logout":
          return Deferred.succeed(command.done, false)
        case "UseConnection":
          return command.answer(Effect.fail(sessionNotRunning))
        default:
          return Effect.void
      }
    }, { discard: true })
  })

export const sessionNotRunning = new Conflict({
  code: "SESSION_NOT_READY",
  message: "the session is not running; start it first"
})
