import { Chunk, Deferred, Effect, HashMap, Queue, Ref } from "effect"
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

/** How long closing waits for the last records to be written. */
const CLOSING_WRITE_LIMIT = "5 seconds"

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
 * so a later change of a message never loses to an earlier one. When the network closes, the
 * write under way finishes and what still waits is written (what would follow from it is not
 * done: a restarted gateway sends its pending messages again and hears `sent` from `resend`).
 *
 * A receipt is as durable as before the batches, not more: the recipient's taking of a message
 * is written at once (`HeldEvents.release`), the sender's record of it with the next batch, so a
 * kill in between loses the receipt (as the in-memory queue of scheduled acks always could).
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
    const written = yield* Queue.unbounded<Chunk.Chunk<Unwritten>>()

    /**
     * Writes the batch's records: the last of each message (a batch may hold its record and a
     * change of it), and none of a session the network forgot meanwhile (`forget` dropped it from
     * memory). A forget that comes while the write is on its way can leave that write's rows of
     * the session behind: they route nothing (the session has no phone any more).
     */
    const writeRecords = (batch: ReadonlyArray<Unwritten>) =>
      Effect.gen(function*() {
        const remembered = yield* Ref.get(sentMessages)
        const latest = new Map<string, SentMessage>()
        for (const { record } of batch) {
          if (record !== undefined && HashMap.has(remembered, record[0])) latest.set(record[0], record[1])
        }
        if (latest.size > 0) yield* ledger.recordSent(Array.from(latest))
      })

    const writeBatch = (batch: Chunk.Chunk<Unwritten>) =>
      Effect.gen(function*() {
        yield* writeRecords(Chunk.toReadonlyArray(batch))
        for (const { durable } of batch) if (durable !== undefined) yield* Deferred.succeed(durable, undefined)
        yield* Queue.offer(written, batch)
      })

    /**
     * What follows from a written batch, under the network's lock. Not in the writer's fiber: a
     * caller holding the lock may wait for a later batch (`recordDurably`). One that fails is
     * logged and the rest still run: the follow-ups must not stop.
     */
    const followUp = (batch: Chunk.Chunk<Unwritten>) =>
      serialized(Effect.forEach(batch, ({ then }) =>
        Effect.catchAllCause(then, (cause) => Effect.logError("sandbox network: what follows a sent record failed", cause)), { discard: true }))

    // At close, after the writer (interrupted first, its write under way finished): the rest,
    // unless the Store is away (the ledger would wait for it) for longer than a close should.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Queue.takeAll(unwritten), (rest) => writeRecords(Chunk.toReadonlyArray(rest))).pipe(
        Effect.timeout(CLOSING_WRITE_LIMIT),
        Effect.catchAll(() => Effect.logWarning("sandbox network: closed before its last sent records were written"))
      ))

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
      /** The writer and the follow-ups; run until interrupted (see above for what then happens). */
      run: Effect.all([
        Effect.forever(Effect.uninterruptibleMask((restore) => Effect.flatMap(restore(Queue.takeBetween(unwritten, 1, MAX_BATCH)), writeBatch))),
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
