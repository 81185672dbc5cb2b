import type { Sharding } from "@effect/cluster"
import { Cause, Clock, Duration, Effect, Layer, Option, Schedule, Schema, Stream } from "effect"
import { SessionRepo } from "../ports/store/SessionRepo.js"
import { Conflict } from "../../domain/Errors.js"
import { CallFailure, type EngineClient, runEngineCall } from "../EngineCall.js"
import type { ActorState } from "../SessionActor.js"
import { SessionSupervisor, type SessionSupervisorService } from "../SessionSupervisor.js"
import { ClusterUnreachable, whenUnreachable } from "./ClusterUnreachable.js"
import { LocalSupervisor, SessionEntity } from "./SessionEntity.js"

/** How long a lifecycle command may wait for the session's shard to have a runner. */
const COMMAND_TIMEOUT = Duration.seconds(30)
/** Longer than the engine's own 30 s answer timeout, so that its EngineTimeout is what the caller sees. */
const CALL_TIMEOUT = Duration.seconds(35)
/** How long a send waits to be handed to the session's actor; after that it waits in the Store. */
const HAND_OVER_TIMEOUT = Duration.seconds(3)
/** How long a backlog read from the session's runner stands for it (counted up by this runner's own hand-overs). */
const BACKLOG_FRESH = Duration.millis(250)
/** How often `watch` asks for the state of a session living on another runner. */
const WATCH_INTERVAL = Duration.millis(100)

const sameState = (a: ActorState, b: ActorState) =>
  a.status === b.status && Option.getOrNull(Option.map(a.qr, (qr) => qr.qr)) === Option.getOrNull(Option.map(b.qr, (qr) => qr.qr))

const isEngineRefusal = Schema.is(CallFailure)

const movingSession = (sessionId: string) =>
  new Conflict({ code: "SESSION_NOT_READY", message: `session ${sessionId} is moving to another runner; try again shortly` })

/**
 * The supervisor in a cluster: every command goes to the session's entity through the
 * cluster's client, wherever the entity lives (this runner or another). What concerns this
 * runner alone (its running actors, their mailboxes and sends, for metrics and the drain)
 * comes from the runner's own supervisor.
 */
export const ClusterSupervisorLive: Layer.Layer<SessionSupervisor, never, LocalSupervisor | SessionRepo | Sharding.Sharding> = Layer
  .scoped(
    SessionSupervisor,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const local = yield* LocalSupervisor
      const sessions = yield* SessionRepo
      const clientFor = yield* SessionEntity.client

      const command = (sessionId: string, run: (client: ReturnType<typeof clientFor>) => Effect.Effect<void, unknown>) =>
        run(clientFor(sessionId)).pipe(
          Effect.timeout(COMMAND_TIMEOUT),
          whenUnreachable(() => Effect.die(new ClusterUnreachable({ what: `session ${sessionId}` })))
        )

      const state: SessionSupervisorService["state"] = (sessionId) =>
        clientFor(sessionId).State().pipe(
          Effect.timeout(HAND_OVER_TIMEOUT),
          whenUnreachable(() => Effect.succeedNone)
        )

      /**
       * Every send checks the backlog, so asking the session's runner each time would add a
       * round trip to every send. A session living here is counted here; one on another runner
       * is asked at most every BACKLOG_FRESH, and its figure is counted up by the sends this
       * runner hands over meanwhile. Sends other runners accept within that window may pass the
       * bound by as many: the bound holds within a fraction of a second's worth of sends.
       */
      const remoteBacklogs = new Map<string, { count: number; readonly at: number }>()
      const backlog: SessionSupervisorService["backlog"] = (sessionId, options) =>
        Effect.gen(function*() {
          const here = yield* local.backlog(sessionId)
          if (Option.isSome(here)) return here
          const now = yield* Clock.currentTimeMillis
          const known = remoteBacklogs.get(sessionId)
          if (known !== undefined && options?.fresh !== true && now - known.at < Duration.toMillis(BACKLOG_FRESH)) {
            return Option.some(known.count)
          }
          const asked = yield* clientFor(sessionId).Backlog().pipe(
            Effect.timeout(HAND_OVER_TIMEOUT),
            whenUnreachable(() => Effect.succeedNone)
          )
          if (Option.isSome(asked)) remoteBacklogs.set(sessionId, { count: asked.value, at: now })
          else remoteBacklogs.delete(sessionId)
          return asked
        })
      const countHandedOver = (sessionId: string) =>
        Effect.sync(() => {
          const known = remoteBacklogs.get(sessionId)
          if (known !== undefined) known.count++
        })

      const service: SessionSupervisorService = {
        start: (sessionId) => command(sessionId, (client) => client.Start()),
        stop: (sessionId) => command(sessionId, (client) => client.Stop()),
        restart: (sessionId) => command(sessionId, (client) => client.Restart()),
        logout: (sessionId) => command(sessionId, (client) => client.Logout()),
        remove: (sessionId) => command(sessionId, (client) => client.Remove()),
        release: local.release,
        // Not handed over in time: the message is stored `pending` and goes out when the
        // session's actor starts, wherever that is.
        send: (sessionId, messageId) =>
          clientFor(sessionId).Send({ messageId }).pipe(
            Effect.timeout(HAND_OVER_TIMEOUT),
            whenUnreachable(() => Effect.succeed(false)),
            Effect.tap((handedOver) => handedOver ? countHandedOver(sessionId) : Effect.void)
          ),
        backlog,
        useConnection: (sessionId, call) => {
          // The entity's client has one method per engine operation, like any `EngineClient`.
          const engine: EngineClient<unknown> = clientFor(sessionId)
          return runEngineCall(engine, call).pipe(
            Effect.timeout(CALL_TIMEOUT),
            // The engine's own refusals pass through; anything else means the session is moving.
            whenUnreachable((cause) => {
              const failure = Cause.failureOption(cause)
              return Option.isSome(failure) && isEngineRefusal(failure.value)
                ? Effect.fail(failure.value)
                : Effect.fail(movingSession(sessionId))
            })
          )
        },
        state,
        // Ends when the session is not running (or cannot be reached), as the local watch does.
        watch: (sessionId) =>
          Stream.repeatEffectWithSchedule(state(sessionId), Schedule.spaced(WATCH_INTERVAL)).pipe(
            Stream.takeWhile(Option.isSome),
            Stream.map((current) => current.value),
            Stream.changesWith(sameState)
          ),
        // Every runner asks at start, in the background: the entity of a session that should run
        // starts it (once, wherever its shard lives); asking again is harmless.
        restore: Effect.gen(function*() {
          const rows = yield* sessions.listDesiredRunning()
          yield* Effect.forEach(rows, (row) => service.start(row.id), { concurrency: 16, discard: true }).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("some sessions could not be restored yet; the reconciler brings them up", cause)),
            Effect.forkIn(scope)
          )
          return rows.length
        }),
        // The entities bring the sessions up wherever their shards live: no one runner knows how many remain.
        restoring: Effect.succeed(0),
        running: local.running,
        mailboxDepths: local.mailboxDepths,
        outgoing: local.outgoing
      }
      return service
    })
  )
