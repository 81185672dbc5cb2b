import { Effect, Option, Queue, Ref, Schedule, Stream, SubscriptionRef } from "effect"
import type { MessageRepo } from "../layers/store/MessageRepo.js"
import { Events, makeEvent } from "../services/Events.js"
import type { EngineConnection, EngineError } from "./Engine.js"
import type { ActorState } from "./SessionActor.js"

export interface OutboundDeps {
  readonly sessionId: string
  readonly state: SubscriptionRef.SubscriptionRef<ActorState>
  readonly connection: Ref.Ref<Option.Option<EngineConnection>>
  readonly messages: MessageRepo
  readonly events: Events["Type"]
}

/** Transient engine errors are retried a few times before the message is marked failed. */
const transientRetry = Schedule.exponential("500 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

/**
 * The session's outbound lane: stored `pending` messages go out one at a time, in the order
 * they were accepted, whenever the session is `ready`. While it is disconnected they wait.
 * Each message carries the engine id it was given when accepted, so a resend after a crash
 * is recognised as the same message by the network rather than delivered twice.
 */
export const makeOutbound = (deps: OutboundDeps) =>
  Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<string>(), Queue.shutdown)
    const queued = new Set<string>()

    const readyConnection = Effect.gen(function*() {
      const { status } = yield* SubscriptionRef.get(deps.state)
      return status === "ready" ? yield* Ref.get(deps.connection) : Option.none()
    })
    /** The connection once the session is ready; usually it already is, so look before waiting. */
    const awaitConnection: Effect.Effect<EngineConnection> = Effect.flatMap(readyConnection, Option.match({
      onSome: Effect.succeed,
      onNone: () =>
        deps.state.changes.pipe(
          Stream.filter((state) => state.status === "ready"),
          Stream.take(1),
          Stream.runDrain,
          Effect.zipRight(Effect.suspend(() => awaitConnection))
        )
    }))

    const sendOne = (messageId: string) =>
      Effect.gen(function*() {
        const row = yield* deps.messages.findRow(messageId)
        if (Option.isNone(row) || row.value.status !== "pending" || row.value.engineMessageId === null) return
        const { chatId, text, engineMessageId } = row.value
        const attempt = Effect.flatMap(awaitConnection, (conn) =>
          conn.sendText({ chatId, text: text ?? "", engineMessageId }))
        const sent = yield* attempt.pipe(
          Effect.retry({ schedule: transientRetry, while: (error: EngineError) => error.transient }),
          Effect.either
        )
        if (sent._tag === "Left") {
          const error = { code: sent.left.code, message: sent.left.message }
          const failed = yield* deps.messages.updateStatus(messageId, "failed", new Date().toISOString(), error)
          if (Option.isSome(failed)) {
            yield* deps.events.publish(makeEvent("message.failed", deps.sessionId, { messageId, chatId, error }))
          }
          return
        }
        const message = yield* deps.messages.findById(deps.sessionId, messageId)
        if (Option.isSome(message)) {
          yield* deps.events.publish(makeEvent("message.sent", deps.sessionId, { message: message.value }))
        }
      })

    return {
      /** The lane itself; runs until interrupted. */
      run: Queue.take(queue).pipe(
        Effect.flatMap((messageId) => Effect.ensuring(sendOne(messageId), Effect.sync(() => queued.delete(messageId)))),
        Effect.forever
      ),
      /** Idempotent: a message already waiting is not queued twice. */
      enqueue: (messageId: string) =>
        Effect.suspend(() => {
          if (queued.has(messageId)) return Effect.void
          queued.add(messageId)
          return Queue.offer(queue, messageId)
        })
    }
  })
