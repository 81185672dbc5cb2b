import { Clock, Context, Duration, Effect, type Fiber, FiberSet, Layer, Schedule } from "effect"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"

export interface LifecycleSettings {
  /** How long a drain waits for in-flight requests and queued sends (`SHUTDOWN_TIMEOUT_MS`). */
  readonly shutdownTimeout: Duration.DurationInput
}

export interface LifecycleService {
  /** True once shutdown has begun: the gateway takes no new work and is not ready. */
  readonly draining: Effect.Effect<boolean>
  /**
   * Runs one request's handler, or `whileDraining` once the gateway drains. A request let in is
   * in flight until its fiber ends (its answer written), unless the handler runs `detach`: an
   * answer that never ends on its own (server-sent events) is not waited for. Whatever still
   * runs when the drain is over is ended then. Each request runs on a fiber of its own, as the
   * HTTP server gives it one.
   */
  readonly serve: <A, E, R>(
    handler: (detach: Effect.Effect<void>) => Effect.Effect<A, E, R>,
    whileDraining: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E, R>
  /**
   * Stops taking new work and waits, for at most the shutdown timeout, until no request is in
   * flight and the network has acknowledged every send the connected sessions had accepted;
   * then ends the requests still running. Runs once: a second call waits for the first.
   */
  readonly drain: Effect.Effect<void>
}

/** How often a drain looks whether the work is done. */
const DRAIN_POLL = "100 millis"
/**
 * How long a drain waits for the network to acknowledge the last sends. An ack slower than
 * that is not coming soon; the send goes again after the restart, as the same message.
 */
const ACK_WAIT = "2 seconds"

/**
 * Graceful shutdown. Closing the layer's scope (SIGTERM/SIGINT, or an embedder closing
 * `SwitchboardCore`/`SwitchboardServer`) drains before the sessions stop; `drainOnClose` above
 * the HTTP server drains earlier still, while the server answers. Sends that did not go out
 * stay `pending` in the Store and go out after the next start.
 */
export class Lifecycle extends Context.Tag("switchboard/Lifecycle")<Lifecycle, LifecycleService>() {
  static readonly layer = (settings: LifecycleSettings) => Layer.scoped(Lifecycle, make(settings))

  /** Drains when this layer's scope closes: acquire it after the HTTP server, so the drain runs first. */
  static readonly drainOnClose = Layer.scopedDiscard(
    Effect.flatMap(Lifecycle, (lifecycle) => Effect.addFinalizer(() => lifecycle.drain))
  )
}

const make = ({ shutdownTimeout }: LifecycleSettings) =>
  Effect.gen(function*() {
    const supervisor = yield* SessionSupervisor
    // Read and set without yielding, so no request slips in between the check and its count.
    let draining = false
    /** Every request being served, ended when the drain is over (event streams never end on their own). */
    const requests = yield* FiberSet.make()
    /** The requests a drain waits for. */
    const inFlight = new Set<Fiber.RuntimeFiber<unknown, unknown>>()

    const serve: LifecycleService["serve"] = (handler, whileDraining) =>
      Effect.withFiberRuntime((fiber) => {
        if (draining) return whileDraining
        FiberSet.unsafeAdd(requests, fiber)
        inFlight.add(fiber)
        // Counted out when the fiber ends, as the FiberSet does: an `ensuring` around the handler
        // was an uninterruptible region more on every request (issue 19).
        const countOut = () => void inFlight.delete(fiber)
        fiber.addObserver(countOut)
        return handler(Effect.sync(countOut))
      })

    // A Store that cannot answer cannot send either: then there is nothing to wait for.
    const outgoing = Effect.catchTag(supervisor.outgoing, "StoreUnavailable", () => Effect.succeed({ queued: 0, unacknowledged: 0 }))
    const remaining = Effect.map(outgoing, (sends) => ({ requests: inFlight.size, ...sends }))
    const pollUntil = (done: (left: Effect.Effect.Success<typeof remaining>) => boolean) =>
      Effect.repeat(remaining, { schedule: Schedule.spaced(DRAIN_POLL), until: done })

    const drainOnce = Effect.gen(function*() {
      draining = true
      const startedAt = yield* Clock.currentTimeMillis
      const before = yield* remaining
      yield* Effect.logInfo(
        `shutting down: draining ${before.requests} request(s) in flight and ${before.unacknowledged} queued send(s), for at most ${Duration.format(shutdownTimeout)}`
      )
      // First every request answered and every lane through (what a lane holds when nothing is
      // pending was cancelled meanwhile), then the last sends acknowledged by the network.
      const sent = pollUntil((left) => left.requests === 0 && (left.queued === 0 || left.unacknowledged === 0))
      const acknowledged = Effect.timeoutOption(pollUntil((left) => left.unacknowledged === 0), ACK_WAIT)
      // Finalizers run uninterruptibly; the wait must be interruptible for its timeout to cut it.
      yield* Effect.zipRight(sent, acknowledged).pipe(Effect.interruptible, Effect.timeoutOption(shutdownTimeout))
      const left = yield* remaining
      const tookMs = (yield* Clock.currentTimeMillis) - startedAt
      const log = left.requests + left.unacknowledged === 0 ? Effect.logInfo : Effect.logWarning
      yield* log(
        `drained in ${tookMs} ms; left: ${left.requests} request(s) in flight (ended now), ${left.unacknowledged} queued send(s) (they go out after the next start)`
      )
      yield* FiberSet.clear(requests)
    }).pipe(
      // The grace period is the orchestrator's, in wall-clock time, whatever clock the program runs on.
      Effect.withClock(Clock.make()),
      Effect.withSpan("Lifecycle.drain")
    )
    const drain = yield* Effect.cached(drainOnce)
    yield* Effect.addFinalizer(() => drain)

    return Lifecycle.of({ draining: Effect.sync(() => draining), serve, drain })
  })
