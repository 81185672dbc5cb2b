import { Chunk, Clock, Deferred, Duration, Effect, HashMap, Option, Queue, Ref, Scope } from "effect"
import { isStatusAdvance, type MessageStatus } from "../../../domain/Message.js"
import type { Me } from "../../../domain/Session.js"
import { type CloseReason, EngineError, EngineEvent } from "../../Engine.js"
import { type HeldEvents, makeHeldEvents } from "./HeldEvents.js"
import { sandboxPhoneOf } from "./identity.js"
import { type HeldEvent, isHeldEvent, type LedgerContents, type LedgerOperations, type SentMessage } from "./Ledger.js"
import { withChanges } from "../../withChanges.js"
import { makeSentRecords, type SentRecords } from "./SentRecords.js"

/**
 * The routing core of the sandbox network: which session is live, what waits for whom, and
 * the receipts on their way back. Every operation here runs under the one lock handed out as
 * `serialized` (callers take it), so "is the recipient Ready?" and "hand it over" can never
 * interleave with a connect or a disconnect: nothing is lost and nothing arrives twice.
 *
 * Like a real WhatsApp server, the network holds every message for a session (and every
 * receipt owed to it) until the session has stored it and acknowledged it (`consumed`), and
 * only then tells the sender `delivered`: an event still in the inbox of a line that closed, or
 * handed over to a process killed before it stored it, is offered again when the session is
 * next Ready.
 */

/** One connection of a session. `lineId` tells a replaced connection from its successor. */
export interface Line {
  readonly sessionId: string
  readonly lineId: number
  readonly me: Me
  readonly inbox: Queue.Enqueue<EngineEvent>
  /** Completed when the line is closed, so its linking fibers stop at once. */
  readonly closed: Deferred.Deferred<void>
}

interface LiveLine extends Line {
  readonly ready: boolean
}

/** The most pieces of scheduled work taken at once. */
const MAX_SCHEDULED_TURN = 256

/** Network work that waits for the ack delay; run one at a time, in the order scheduled. */
interface ScheduledWork {
  readonly dueAt: number
  readonly run: Effect.Effect<void>
}

const notConnected = new EngineError({
  code: "NOT_CONNECTED",
  message: "sandbox: the session is not connected and ready",
  transient: true
})

const replaced: CloseReason = {
  kind: "fatal",
  code: "CONNECTION_REPLACED",
  message: "sandbox: another connection for this session was opened"
}

export type Switchboard = ReturnType<typeof switchboardOf>

export const makeSwitchboard = (
  initialAckDelay: Duration.Duration,
  ledger: LedgerOperations<never>,
  remembered: LedgerContents
): Effect.Effect<Switchboard, never, Scope.Scope> =>
  Effect.gen(function*() {
    const lock = yield* Effect.makeSemaphore(1)
    const serialized = lock.withPermits(1)
    const sentMessages = yield* Ref.make(HashMap.fromIterable(remembered.sent))
    const sentRecords = yield* makeSentRecords({ ledger, serialized, sentMessages })
    const switchboard = switchboardOf({
      serialized,
      ledger,
      lines: yield* Ref.make(HashMap.empty<string, LiveLine>()),
      phoneOwners: yield* Ref.make(HashMap.fromIterable(remembered.phoneOwners)),
      held: yield* makeHeldEvents(ledger, remembered.held),
      sentMessages,
      sentRecords,
      ackDelay: yield* Ref.make(initialAckDelay),
      scheduled: yield* Queue.unbounded<ScheduledWork>()
    })
    yield* Effect.forkScoped(switchboard.runScheduledWork)
    yield* Effect.forkScoped(sentRecords.run)
    return switchboard
  })

const switchboardOf = (state: {
  readonly serialized: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Every change to phoneOwners, held and sentMessages is written through to it. */
  readonly ledger: LedgerOperations<never>
  readonly lines: Ref.Ref<HashMap.HashMap<string, LiveLine>>
  /** Sandbox phones seen on the network, so a message can wait for a session that is away. */
  readonly phoneOwners: Ref.Ref<HashMap.HashMap<string, string>>
  /** Events not yet taken by their session's consumer, whether it is Ready or away. */
  readonly held: HeldEvents
  readonly sentMessages: Ref.Ref<HashMap.HashMap<string, SentMessage>>
  /** Writes every change to `sentMessages` through to the ledger, in batches. */
  readonly sentRecords: SentRecords
  readonly ackDelay: Ref.Ref<Duration.Duration>
  readonly scheduled: Queue.Queue<ScheduledWork>
}) => {
  const { serialized, ledger, lines, phoneOwners, held, sentMessages, sentRecords, ackDelay, scheduled } = state

  /**
   * A message the network took: recorded, and once the record is durable its sender hears
   * `sent` and `then` runs (the network's lock held). The ledger says `sent` from the start, so
   * that ack is a change of memory only (`applyStatus`).
   */
  const recordNew = (engineMessageId: string, message: SentMessage, then: Effect.Effect<void> = Effect.void) =>
    Effect.suspend(() => {
      awaitingSent.add(engineMessageId)
      return sentRecords.record(
        engineMessageId,
        message,
        Effect.suspend(() => {
          awaitingSent.delete(engineMessageId)
          return Effect.zipRight(acknowledge(engineMessageId, "sent"), then)
        })
      )
    })
  /** Messages recorded whose `sent` is not scheduled yet: anything their sender hears comes after it. */
  const awaitingSent = new Set<string>()

  const liveLine = (sessionId: string) => Ref.get(lines).pipe(Effect.map(HashMap.get(sessionId)))

  /** The line as it is now, if it is still its session's live connection. */
  const current = (line: Line) =>
    liveLine(line.sessionId).pipe(Effect.map(Option.filter((live) => live.lineId === line.lineId)))

  const emitIfLive = (line: Line, event: EngineEvent) =>
    current(line).pipe(Effect.flatMap(Option.match({
      onNone: () => Effect.void,
      onSome: (live) => Effect.asVoid(Queue.offer(live.inbox, event))
    })))

  /**
   * An event that is news only now (presence): offered to the session if it is Ready, held for
   * nobody. Its consumer taking it changes nothing on the network.
   */
  const offerIfReady = (sessionId: string, event: EngineEvent) =>
    liveLine(sessionId).pipe(Effect.flatMap((live) =>
      Option.isSome(live) && live.value.ready ? Effect.asVoid(Queue.offer(live.value.inbox, event)) : Effect.void
    ))

  /** Everything network-made (statuses, echo replies) goes through the FIFO, after the ack delay. */
  const schedule = (run: Effect.Effect<void>) =>
    Effect.gen(function*() {
      const dueAt = (yield* Clock.currentTimeMillis) + Duration.toMillis(yield* Ref.get(ackDelay))
      yield* Queue.offer(scheduled, { dueAt, run })
    })

  /**
   * Runs the scheduled work in order, each piece once it is due; the pieces due together run
   * under one taking of the lock (under load, a turn's acks are many). The network's bookkeeping
   * is durable: its ledger waits while the Store is down (`untilLedgerIsBack`), so an ack is held
   * back then, not dropped.
   */
  const runDue = (work: Chunk.Chunk<ScheduledWork>) =>
    Effect.gen(function*() {
      const pieces = Chunk.toReadonlyArray(work)
      let next = 0
      while (next < pieces.length) {
        const now = yield* Clock.currentTimeMillis
        const dueAt = pieces[next]!.dueAt
        if (now < dueAt) {
          yield* Effect.sleep(Duration.millis(dueAt - now))
          continue
        }
        let end = next + 1
        while (end < pieces.length && pieces[end]!.dueAt <= now) end++
        const due = pieces.slice(next, end)
        yield* serialized(Effect.forEach(due, (piece) => piece.run, { discard: true }))
        next = end
      }
    })
  const runScheduledWork = Effect.forever(Effect.flatMap(Queue.takeBetween(scheduled, 1, MAX_SCHEDULED_TURN), runDue))

  /**
   * A session the network has a phone for. One it never saw, or forgot, has nobody to hold
   * anything for (an echo reply or a receipt still on its way to a deleted session).
   */
  const knows = (sessionId: string) =>
    Ref.get(phoneOwners).pipe(Effect.map((owners) =>
      Option.contains(HashMap.get(owners, sandboxPhoneOf(sessionId)), sessionId)
    ))

  /**
   * Holds the event until the session's consumer takes it, and offers it at once if the session
   * is Ready (else `becomeReady` will). An event already held is already on the Ready line's
   * inbox, or will be offered when the session is next Ready: offering it again would duplicate it.
   */
  const handTo = (sessionId: string, event: HeldEvent): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (!(yield* knows(sessionId))) return
      const live = yield* liveLine(sessionId)
      const ready = Option.isSome(live) && live.value.ready
      // A `sent` receipt offered at once is usually taken at once: its ledger row is written
      // only if its line goes away first (`unplug`, `close`). Killed meanwhile, the gateway still
      // has the message pending and sends it again, and `resend` hands the receipt again.
      const writeLater = ready && event._tag === "MessageStatusChanged" && event.status === "sent"
      if (!(yield* held.hold(sessionId, event, { writeLater }))) return
      if (ready) yield* Queue.offer(live.value.inbox, event)
    })

  /**
   * The session stored the event and acknowledged it: the network stops holding it, and only
   * now does a message count as delivered to its sender. An event that was not held any more
   * (acknowledged before, e.g. on a previous line) was offered twice; its sender heard already.
   */
  const consumed = (line: Line, event: EngineEvent): Effect.Effect<void> =>
    isHeldEvent(event)
      ? held.release(line.sessionId, event).pipe(Effect.flatMap((released) =>
        released && event._tag === "MessageReceived" ? receipt(event.message.engineMessageId, "delivered", line.me.phone) : Effect.void
      ))
      : Effect.void

  /**
   * Schedules a status for the message's sender. A receipt can come before the message's record
   * is durable (its recipient took it meanwhile): it then waits for that record's `sent`, as a
   * WhatsApp server acknowledges a message before it passes on any receipt for it.
   */
  const acknowledge = (engineMessageId: string, status: MessageStatus): Effect.Effect<void> =>
    Effect.suspend(() => {
      const scheduled = schedule(applyStatus(engineMessageId, status))
      return awaitingSent.has(engineMessageId) ? sentRecords.afterWritten(scheduled) : scheduled
    })

  /**
   * A recipient took (`delivered`) or read a message. In a person chat that is the sender's
   * receipt; a group message goes `delivered` (`read`) once every member session it was handed
   * to has taken (read) it. Reading implies having taken it. A receipt for what this network
   * did not send (an echo reply) goes nowhere.
   */
  const receipt = (engineMessageId: string, status: "delivered" | "read", memberPhone: string) =>
    Effect.gen(function*() {
      const message = HashMap.get(yield* Ref.get(sentMessages), engineMessageId)
      if (Option.isNone(message)) return
      const { awaiting } = message.value
      if (awaiting === undefined) return yield* acknowledge(engineMessageId, status)
      const delivered = awaiting.delivered.filter((phone) => phone !== memberPhone)
      const read = status === "read" ? awaiting.read.filter((phone) => phone !== memberPhone) : awaiting.read
      if (delivered.length === awaiting.delivered.length && read.length === awaiting.read.length) return
      yield* sentRecords.record(
        engineMessageId,
        withChanges(message.value, { awaiting: { delivered, read } }),
        Effect.all([
          delivered.length === 0 && awaiting.delivered.length > 0 ? acknowledge(engineMessageId, "delivered") : Effect.void,
          read.length === 0 && awaiting.read.length > 0 ? acknowledge(engineMessageId, "read") : Effect.void
        ], { discard: true })
      )
    })

  /** Statuses only move forward, so a repeated `markRead` or a late receipt changes nothing. */
  const applyStatus = (engineMessageId: string, status: MessageStatus) =>
    Effect.gen(function*() {
      const message = HashMap.get(yield* Ref.get(sentMessages), engineMessageId)
      if (Option.isNone(message) || !isStatusAdvance(message.value.status, status)) return
      const moved = withChanges(message.value, { status })
      const tellSender = handTo(message.value.senderSessionId, EngineEvent.MessageStatusChanged({ engineMessageId, status }))
      // The ledger says `sent` already (see `recordNew`).
      if (status !== "sent") return yield* sentRecords.record(engineMessageId, moved, tellSender)
      yield* Ref.update(sentMessages, HashMap.set(engineMessageId, moved))
      yield* tellSender
    })

  const close = (line: Line, reason: CloseReason) =>
    current(line).pipe(Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(false),
      onSome: (live) =>
        Queue.offer(live.inbox, EngineEvent.Closed({ reason })).pipe(
          Effect.zipRight(Ref.update(lines, HashMap.remove(line.sessionId))),
          Effect.zipRight(held.writeDeferred(line.sessionId)),
          Effect.zipRight(Deferred.succeed(live.closed, undefined)),
          Effect.as(true)
        )
    })))

  const plugIn = (line: Line) =>
    Effect.gen(function*() {
      const previous = yield* liveLine(line.sessionId)
      if (Option.isSome(previous)) yield* close(previous.value, replaced)
      const live: LiveLine = { ...line, ready: false }
      yield* Ref.update(lines, HashMap.set(line.sessionId, live))
      const owner = HashMap.get(yield* Ref.get(phoneOwners), line.me.phone)
      if (Option.isNone(owner) || owner.value !== line.sessionId) {
        yield* Ref.update(phoneOwners, HashMap.set(line.me.phone, line.sessionId))
        yield* ledger.rememberOwner(line.me.phone, line.sessionId)
      }
    })

  /** The scope closed: the session is away; whatever arrives for it now waits. */
  const unplug = (line: Line) =>
    current(line).pipe(Effect.flatMap(Option.match({
      onNone: () => Effect.void,
      onSome: () => Effect.zipRight(Ref.update(lines, HashMap.remove(line.sessionId)), held.writeDeferred(line.sessionId))
    })))

  const becomeReady = (line: Line) =>
    Effect.gen(function*() {
      const live = yield* current(line)
      if (Option.isNone(live) || live.value.ready) return
      const ready: LiveLine = { ...live.value, ready: true }
      yield* Ref.update(lines, HashMap.set(line.sessionId, ready))
      yield* Queue.offer(line.inbox, EngineEvent.Ready({ me: line.me }))
      // Still held, not cleared: they count as taken only once the consumer pulls them.
      yield* Queue.offerAll(line.inbox, yield* held.inOrder(line.sessionId))
    })

  /**
   * The session was deleted: its held events, its phone and the messages it sent go. A message
   * to that phone then reaches nobody (it stays at `sent`) until a session connects with it again.
   */
  const forget = (sessionId: string) =>
    Effect.gen(function*() {
      yield* held.forget(sessionId)
      yield* Ref.update(phoneOwners, HashMap.filter((owner) => owner !== sessionId))
      yield* Ref.update(sentMessages, HashMap.filter((message) => message.senderSessionId !== sessionId))
      yield* ledger.forgetSession(sessionId)
    })

  const requireReady = (line: Line) =>
    current(line).pipe(Effect.flatMap((live) => Option.isSome(live) && live.value.ready ? Effect.void : Effect.fail(notConnected)))

  return {
    serialized,
    runScheduledWork,
    phoneOwners,
    sentMessages,
    recordNew,
    recordDurably: sentRecords.recordDurably,
    afterWritten: sentRecords.afterWritten,
    liveLine,
    emitIfLive,
    offerIfReady,
    close,
    plugIn,
    unplug,
    becomeReady,
    consumed,
    forget,
    requireReady,
    handTo,
    schedule,
    acknowledge,
    receipt,
    setAckDelay: (duration: Duration.DurationInput) => Ref.set(ackDelay, Duration.decode(duration))
  }
}
