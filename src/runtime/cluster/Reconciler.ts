import { Singleton } from "@effect/cluster"
import { Duration, Effect, Schedule } from "effect"
import { SessionRepo } from "../ports/store/SessionRepo.js"
import { SessionEntity } from "./SessionEntity.js"
import { dispatchEntityIds, WebhookOutboxEntity } from "./WebhookOutboxEntity.js"

/** How often every session that should run, and the webhook dispatcher, are woken. */
const INTERVAL = Duration.seconds(5)
/** How long one wake may take (its runner may be the one that just died). */
const WAKE_TIMEOUT = Duration.seconds(10)

/**
 * The cluster's safety net, run by one runner at a time (a cluster singleton, which moves
 * when its runner dies): every few seconds it wakes the entity of every session that should
 * be running, and the webhook dispatchers' (one per share of the webhooks). Where the entity is up, a wake does nothing; where
 * its runner died, it brings the entity up on the shard's new runner, which starts the
 * session. The entities' keep-alive is not enough on its own: @effect/cluster 0.60 answers
 * (and so marks processed) a held keep-alive message when storage offers it again, so after
 * a while nothing in storage says the entity must come back.
 */
export const ReconcilerLive = Singleton.make(
  "switchboard/reconcile",
  Effect.gen(function*() {
    const sessions = yield* SessionRepo
    const sessionEntity = yield* SessionEntity.client
    const outbox = yield* WebhookOutboxEntity.client
    const wake = (ping: Effect.Effect<void, unknown>) => Effect.asVoid(Effect.exit(Effect.timeout(ping, WAKE_TIMEOUT)))

    const pass = Effect.gen(function*() {
      const running = yield* sessions.listDesiredRunning()
      yield* Effect.forEach(running, (row) => wake(sessionEntity(row.id).Ensure()), { concurrency: 16, discard: true })
      yield* Effect.forEach(dispatchEntityIds, (id) => wake(outbox(id).Wake()), { concurrency: "unbounded", discard: true })
    })
    yield* Effect.repeat(Effect.exit(pass), Schedule.spaced(INTERVAL))
  })
)
