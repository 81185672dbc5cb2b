import { untilStoreIsBack } from "../storeOutage.js"
import { StoreUnavailable } from "../../domain/Errors.js"
import { Entity, Sharding } from "@effect/cluster"
import { Rpc, RpcGroup } from "@effect/rpc"
import { Context, Duration, Effect, Option, Schedule, Schema } from "effect"
import { SessionRepo } from "../ports/store/SessionRepo.js"
import { LastError, SessionStatus } from "../../domain/Session.js"
import { engineCall, type EngineOperation, type EnginePayload, EngineRpcs, perOperation } from "../EngineCall.js"
import type { ActorState } from "../SessionActor.js"
import type { SessionSupervisorService } from "../SessionSupervisor.js"

/** A session's live state as it crosses between runners (`ActorState`, with the QR's expiry as a date string). */
export const LiveState = Schema.Struct({
  status: SessionStatus,
  qr: Schema.Option(Schema.Struct({ qr: Schema.String, expiresAt: Schema.Date })),
  lastError: Schema.NullOr(LastError)
})

/**
 * A session in a cluster: one entity per session id, living on the runner that owns the id's
 * shard. Its commands are the supervisor's, as Rpcs, and the engine operations, one Rpc each
 * (`EngineRpcs`); the runner that hosts it runs the session's actor (and so holds its engine
 * connection) in the entity's scope. A message naming any other Rpc is refused by the runner.
 */
export const SessionEntity = Entity.fromRpcGroup(
  "Session",
  RpcGroup.make(
    Rpc.make("Start", { error: StoreUnavailable }),
    Rpc.make("Stop", { error: StoreUnavailable }),
    Rpc.make("Restart", { error: StoreUnavailable }),
    Rpc.make("Logout", { error: StoreUnavailable }),
    Rpc.make("Remove", { error: StoreUnavailable }),
    Rpc.make("Send", { payload: { messageId: Schema.String }, success: Schema.Boolean }),
    Rpc.make("State", { success: Schema.Option(LiveState) }),
    /** The sends accepted and not yet gone out, counted where the lane is (`SessionSupervisorService.backlog`). */
    Rpc.make("Backlog", { success: Schema.Option(Schema.Number) }),
    /** Nothing, but bringing the entity up if it is not (see `Reconciler`). */
    Rpc.make("Ensure")
  ).merge(EngineRpcs)
)

/** The supervisor of this runner's own actors, which the entities drive. */
export class LocalSupervisor extends Context.Tag("switchboard/cluster/LocalSupervisor")<
  LocalSupervisor,
  SessionSupervisorService
>() {}

/** How often an entity checks that its runner still holds its shard (see `SessionEntityLive`). */
const SHARD_CHECK_INTERVAL = Duration.seconds(2)

const toLive = (state: ActorState): typeof LiveState.Type => ({ status: state.status, qr: state.qr, lastError: state.lastError })

/**
 * The entity's behaviour on the runner that hosts it. Activation (the first command, or the
 * keep-alive message a runner finds for a shard it took over) starts the actor of a session
 * that should be running, and keeps the entity alive while it runs. When the entity closes
 * (its shard moved, or the runner shuts down), the actor is interrupted here before the shard
 * is let go, so a session is never connected from two runners at once; where the shard goes,
 * the keep-alive message (or the next reconcile pass, see `Reconciler`) brings it up again.
 *
 * @effect/cluster 0.60 closes, before letting a shard go, only the entities it has finished
 * activating: one still in its activation (which reads the Store and starts the actor, long
 * enough on a loaded machine) when its shard moves is missed, lives on here, and the shard's
 * new runner starts the session as well: connected from two runners. So every entity checks
 * that its runner still holds its shard, stops its actor when not, and starts it again if the
 * shard comes back (the reconcile pass then reaches this entity, whose `Ensure` does nothing).
 */
export const SessionEntityLive = SessionEntity.toLayer(
  Effect.gen(function*() {
    const { entityId: sessionId, shardId } = yield* Entity.CurrentAddress
    const sharding = yield* Sharding.Sharding
    const local = yield* LocalSupervisor
    const sessions = yield* SessionRepo
    const entityContext = yield* Effect.context<Entity.CurrentAddress>()

    let keptAlive = false
    const keepAlive = (enabled: boolean) =>
      Effect.suspend(() => {
        if (keptAlive === enabled) return Effect.void
        keptAlive = enabled
        return Entity.keepAlive(enabled)
      }).pipe(Effect.provide(entityContext))

    yield* Effect.addFinalizer(() => local.release(sessionId))
    /** Starts the actor of a session that should be running. */
    const startIfWanted = Effect.gen(function*() {
      const row = yield* untilStoreIsBack(sessions.findById(sessionId), "activating a session entity")
      if (Option.isSome(row) && row.value.desiredRunning) {
        yield* untilStoreIsBack(local.start(sessionId), "starting a session on its runner")
        yield* keepAlive(true)
      }
    })
    yield* startIfWanted

    // A runner shutting down holds no shard any more; its actors stop with the supervisor, after the drain.
    let stoppedForLostShard = false
    yield* Effect.gen(function*() {
      if (yield* sharding.isShutdown) return
      const holdsShard = sharding.hasShardId(shardId)
      if (!holdsShard && Option.isSome(yield* local.state(sessionId))) {
        stoppedForLostShard = true
        yield* Effect.logWarning("a session entity outlived its shard's release on this runner; its actor stops here")
        yield* local.release(sessionId)
      } else if (holdsShard && stoppedForLostShard) {
        stoppedForLostShard = false
        yield* startIfWanted
      }
    }).pipe(Effect.repeat(Schedule.spaced(SHARD_CHECK_INTERVAL)), Effect.annotateLogs("sessionId", sessionId), Effect.forkScoped)

    // Every engine operation goes to this runner's supervisor, which hands it to the actor.
    const forward = <Op extends EngineOperation>(request: { readonly tag: Op; readonly payload: EnginePayload<Op> }) =>
      local.useConnection(sessionId, engineCall(request.tag, request.payload))

    return SessionEntity.of({
      ...perOperation<typeof forward>(() => forward),
      Start: () => Effect.zipRight(local.start(sessionId), keepAlive(true)),
      Stop: () => Effect.zipRight(local.stop(sessionId), keepAlive(false)),
      Restart: () => Effect.zipRight(local.restart(sessionId), keepAlive(true)),
      Logout: () => Effect.zipRight(local.logout(sessionId), keepAlive(false)),
      Remove: () => Effect.zipRight(local.remove(sessionId), keepAlive(false)),
      Send: ({ payload }) => local.send(sessionId, payload.messageId),
      State: () => Effect.map(local.state(sessionId), Option.map(toLive)),
      Backlog: () => local.backlog(sessionId),
      Ensure: () => Effect.void
    })
  }),
  // A slow engine call must not hold up a send or a state read; the actor orders what needs order.
  { concurrency: "unbounded" }
)
