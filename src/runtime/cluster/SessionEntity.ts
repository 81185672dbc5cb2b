import { untilStoreIsBack } from "../storeOutage.js"
import { StoreUnavailable } from "../../domain/Errors.js"
import { Entity } from "@effect/cluster"
import { Rpc, RpcGroup } from "@effect/rpc"
import { Context, Effect, Option, Schema } from "effect"
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

const toLive = (state: ActorState): typeof LiveState.Type => ({ status: state.status, qr: state.qr, lastError: state.lastError })

/**
 * The entity's behaviour on the runner that hosts it. Activation (the first command, or the
 * keep-alive message a runner finds for a shard it took over) starts the actor of a session
 * that should be running, and keeps the entity alive while it runs. When the entity closes
 * (its shard moved, or the runner shuts down), the actor is interrupted here before the shard
 * is let go, so a session is never connected from two runners at once; where the shard goes,
 * the keep-alive message (or the next reconcile pass, see `Reconciler`) brings it up again.
 */
export const SessionEntityLive = SessionEntity.toLayer(
  Effect.gen(function*() {
    const sessionId = (yield* Entity.CurrentAddress).entityId
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
    const row = yield* untilStoreIsBack(sessions.findById(sessionId), "activating a session entity")
    if (Option.isSome(row) && row.value.desiredRunning) {
      yield* untilStoreIsBack(local.start(sessionId), "starting a session on its runner")
      yield* keepAlive(true)
    }

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
