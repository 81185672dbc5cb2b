import { Effect, Option, Queue, Schedule, Stream, SubscriptionRef } from "effect"
import type { MessageRepo } from "../layers/store/MessageRepo.js"
import { Events, makeEvent } from "../services/Events.js"
import type { EngineConnection, EngineError } from "./Engine.js"
import { type PacingSettings, pauseAfterSend } from "./Pacing.js"

export interface OutboundDeps {
  readonly sessionId: string
  readonly pacing: PacingSettings
  /** Some while the session is ready; the lane sends only then. */
  readonly readyConnection: SubscriptionRef.SubscriptionRef<Option.Option<EngineConnection>>
  readonly messages: MessageRepo
}

/** Transient engine errors are retried a few times before the message is marked failed. */
const transientRetry = Schedule.exponential("500 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

/**
 * The session's outbound lane: stored `pending` messages go out one at a time, in the order
 * they were accepted, whenever the session is ready, no faster than the session's pacing.
 * While it is not ready they wait; callers are never refused for going too fast. Each message
 * carries the engine id it was given when accepted, so a resend after a crash is recognised
 * as the same message by the network rather than delivered twice. The network's
 * acknowledgements then move the status on (see InboundEvents).
 */
export const makeOutbound = (deps: OutboundDeps) =>
  Effect.gen(function*() {
    const events = yield* Events
    const queue = yield* Effect.acquireRelease(Queue.unbounded<string>(), Queue.shutdown)
    const queued = new Set<string>()

    /** The ready connection; usually there already, so look before subscribing to changes. */
    const awaitConnection: Effect.Effect<EngineConnection> = Effect.flatMap(
      SubscriptionRef.get(deps.readyConnection),
      Option.match({
        onSome: Effect.succeed,
        onNone: () =>
          deps.readyConnection.changes.pipe(
            Stream.filterMap((connection) => connection),
            Stream.runHead,
            Effect.flatMap(Option.match({ onNone: () => awaitConnection, onSome: Effect.succeed }))
          )
      })
    )

    const sendOne = (messageId: string) =>
      Effect.gen(function*() {
        const row = yield* deps.messages.findRow(messageId)
        if (Option.isNone(row) || row.value.status !== "pending" || row.value.engineMessageId === null) return false
        const { chatId, engineMessageId, mentions, quotedMessageId, text } = row.value
        const quoted = quotedMessageId === null ? Option.none() : yield* deps.messages.findRow(quotedMessageId)
        const command = {
          engineMessageId,
          chatId,
          text: text ?? "",
          quotedEngineMessageId: Option.getOrUndefined(Option.flatMapNullable(quoted, (q) => q.engineMessageId)),
          mentions: mentions ?? undefined
        }
        const sent = yield* Effect.flatMap(awaitConnection, (conn) => conn.sendText(command)).pipe(
          Effect.retry({ schedule: transientRetry, while: (error: EngineError) => error.transient }),
          Effect.either
        )
        if (sent._tag === "Right") return true
        const error = { code: sent.left.code, message: sent.left.message }
        const failed = yield* deps.messages.updateStatus(messageId, "failed", new Date().toISOString(), error)
        if (Option.isSome(failed)) {
          yield* events.publish(makeEvent("message.failed", deps.sessionId, { messageId, chatId, error }))
        }
        return true
      })

    return {
      /** The lane itself; runs until interrupted. */
      run: Queue.take(queue).pipe(
        Effect.flatMap((messageId) =>
          Effect.ensuring(sendOne(messageId), Effect.sync(() => queued.delete(messageId))).pipe(
            Effect.flatMap((attempted) => (attempted ? pauseAfterSend(deps.pacing) : Effect.void))
          )),
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
