import { type Chunk, Deferred, Effect, HashMap, Queue, Ref } from "effect"
import type { LedgerOperations, SentMessage } from "./Ledger.js"
import { withChanges } from "../../withChanges.js"

/** A record on its way to the ledger, and whoever waits for it to be durable. */
interface Unwritten {
  /** Absent for work that only waits for the records before it (`afterWritten`). */
  readonly record: readonly [engineMessageId: string, message: SentMessage] | undefined
  /** Runs under the network's lock once the record is durable. */
  readonly then: Effect.Effect<void>
  /** Completed once the record is durable, before `then` (whose lock its waiter may hold). */
  readonly durable: Deferred.Deferred<void> | undefined
}

interface Written {
  readonly batch: Chunk.Chunk<Unwritten>
  readonly latest: ReadonlyMap<string, SentMessage>
}

/** The most records one ledger write takes. */
const MAX_BATCH = 256

/**
 * The network's records of the messages its sessions sent, kept in memory (`sentMessages`, read
 * at once by everything that routes a receipt) and written to the ledger in batches by one
 * fiber: whatever was recorded while a write was on its way goes in the next one, so under load
 * hundreds of sends share one ledger write (issue 19: written one by one, outside any
 * transaction, the records cost ~0.2 ms of a send's CPU). Nobody hears of a record before it
 * is durable: what follows from it (the sender's `sent`, a receipt passed on) is handed over as
 * `then` and runs only once its batch is written, so a gateway killed meanwhile still has the
 * message pending and sends it again, which the network then takes as new, exactly as when it
 * is killed between holding a message for its recipient and recording it (see
 * `Messaging.send`). Records are written in the order they were made, one batch after another,
 * so a later change of a message never loses to an earlier one.
 */
export const makeSentRecords = (deps: {
  readonly ledger: LedgerOperations<never>
  readonly serialized: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly sentMessages: Ref.Ref<HashMap.HashMap<string, SentMessage>>
}) =>
  Effect.gen(function*() {
    const { ledger, serialized, sentMessages } = deps
    const unwritten = yield* Queue.unbounded<Unwritten>()
    /** Batches written, their `then`s still to run. */
    const written = yield* Queue.unbounded<Written>()

    const writeBatch = (batch: Chunk.Chunk<Unwritten>) =>
      Effect.gen(function*() {
        // The last record of a message wins (a batch may hold its record and a change of it).
        const latest = new Map<string, SentMessage>()
        for (const { record } of batch) if (record !== undefined) latest.set(record[0], record[1])
        if (latest.size > 0) yield* ledger.recordSent(Array.from(latest))
        for (const { durable } of batch) if (durable !== undefined) yield* Deferred.succeed(durable, undefined)
        yield* Queue.offer(written, { latest, batch })
      })

    /**
     * What follows from a written batch, under the network's lock. Not in the writer's fiber: a
     * caller holding the lock may wait for a later batch (`recordDurably`).
     */
    const followUp = ({ batch, latest }: Written) =>
      serialized(Effect.gen(function*() {
        // A session forgotten while its records were on their way: their rows go again.
        const remembered = yield* Ref.get(sentMessages)
        const forgotten = new Set<string>()
        for (const [engineMessageId, message] of latest) {
          if (!HashMap.has(remembered, engineMessageId)) forgotten.add(message.senderSessionId)
        }
        for (const sessionId of forgotten) yield* ledger.forgetSession(sessionId)
        for (const { then } of batch) yield* then
      }))

    /**
     * A new or changed record: in memory at once, in the ledger with the next batch. A new
     * message's record says `sent` in the ledger from the start, so that its `sent` ack is a
     * change of memory only and a gateway restarted before that ack, which sends the message
     * again, hears `sent` from `resend`.
     */
    const enqueue = (engineMessageId: string, message: SentMessage, then: Effect.Effect<void>, durable?: Deferred.Deferred<void>) =>
      Effect.zipRight(
        Ref.update(sentMessages, HashMap.set(engineMessageId, message)),
        Queue.offer(unwritten, {
          record: [engineMessageId, message.status === "pending" ? withChanges(message, { status: "sent" }) : message],
          then,
          durable
        })
      )

    return {
      /** The writer; runs until interrupted (a record not yet written then is as if never made). */
      run: Effect.all([
        Effect.forever(Effect.flatMap(Queue.takeBetween(unwritten, 1, MAX_BATCH), writeBatch)),
        Effect.forever(Effect.flatMap(Queue.take(written), followUp))
      ], { concurrency: 2, discard: true }),
      /** Records the message; `then` runs under the network's lock once the record is durable. */
      record: (engineMessageId: string, message: SentMessage, then: Effect.Effect<void> = Effect.void) =>
        enqueue(engineMessageId, message, then),
      /** Runs `then` under the network's lock once every record made before is durable (and its `then` ran). */
      afterWritten: (then: Effect.Effect<void>) => Queue.offer(unwritten, { record: undefined, then, durable: undefined }),
      /**
       * Records the message and waits until it is durable: for a change its caller reports as
       * done (a revoke). The caller may hold the network's lock: the writer does not need it
       * for that.
       */
      recordDurably: (engineMessageId: string, message: SentMessage) =>
        Effect.flatMap(Deferred.make<void>(), (durable) =>
          Effect.zipRight(enqueue(engineMessageId, message, Effect.void, durable), Deferred.await(durable)))
    }
  })

export type SentRecords = Effect.Effect.Success<ReturnType<typeof makeSentRecords>>
