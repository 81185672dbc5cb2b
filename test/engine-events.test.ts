import { describe, expect, it } from "@effect/vitest"
import { type Duration, Effect, Fiber, Queue } from "effect"
import { EngineEvent, takeEventsFrom } from "../src/runtime/Engine.js"

/**
 * How a session takes its connection's events (`takeEventsFrom`, both engines): what is waiting,
 * and, under load (the previous take came back a moment ago) when that ends with a receipt,
 * whatever else came within the same turn of the event loop, so that a lane's receipts are
 * applied together (issue 19) rather than one transaction each.
 */

const receipt = (id: string) => EngineEvent.MessageStatusChanged({ engineMessageId: id, status: "sent" })
const tagsOf = (events: ReadonlyArray<EngineEvent>) =>
  events.map((event) => (event._tag === "MessageStatusChanged" ? `receipt ${event.engineMessageId}` : event._tag))

/**
 * Takes a first receipt, waits `quietFor`, then starts a take on the empty queue, lets it find
 * `first` alone, and offers the rest.
 */
const takeWhileOffering = (first: EngineEvent, rest: ReadonlyArray<EngineEvent>, quietFor: Duration.DurationInput = 0) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<EngineEvent>()
    // Under load is "within 150 ms of the previous take" here, so that a busy test machine
    // cannot turn the quick succession into a quiet spell; the quiet spells wait longer.
    const take = takeEventsFrom(queue, 256, undefined, 150)
    yield* Queue.offer(queue, receipt("earlier"))
    yield* take
    yield* Effect.sleep(quietFor)
    const taking = yield* Effect.fork(take)
    yield* Effect.yieldNow()
    yield* Queue.offer(queue, first)
    yield* Effect.yieldNow() // the take wakes with the first event alone
    yield* Queue.offerAll(queue, rest)
    const taken = yield* Fiber.join(taking)
    return { taken: tagsOf(taken), next: tagsOf(yield* Queue.takeAll(queue).pipe(Effect.map((chunk) => [...chunk]))) }
  })

describe("taking a connection's events", () => {
  it.live("under load, receipts that come within the same turn are taken together", () =>
    Effect.gen(function*() {
      const { next, taken } = yield* takeWhileOffering(receipt("A"), [receipt("B"), receipt("C")])
      expect(taken).toEqual(["receipt A", "receipt B", "receipt C"])
      expect(next).toEqual([])
    }))

  it.live("after a quiet spell a receipt is handed over at once: whoever saw the message arrive finds it sent", () =>
    Effect.gen(function*() {
      const { next, taken } = yield* takeWhileOffering(receipt("A"), [receipt("B")], "600 millis")
      expect(taken).toEqual(["receipt A"])
      expect(next).toEqual(["receipt B"])
    }))

  it.live("any other event is handed over at once, without waiting for company", () =>
    Effect.gen(function*() {
      const { next, taken } = yield* takeWhileOffering(EngineEvent.Authenticating(), [receipt("B")])
      expect(taken).toEqual(["Authenticating"])
      expect(next).toEqual(["receipt B"])
    }))

  it.live("a receipt waits one turn at most: a later one is the next take's", () =>
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<EngineEvent>()
      const take = takeEventsFrom(queue, 256)
      yield* Queue.offer(queue, receipt("A"))
      const first = yield* take
      yield* Queue.offer(queue, receipt("B"))
      expect(tagsOf(first)).toEqual(["receipt A"])
      expect(tagsOf(yield* take)).toEqual(["receipt B"])
    }))

  it.live("nothing is taken past Closed, and nothing after it", () =>
    Effect.gen(function*() {
      const closed = EngineEvent.Closed({ reason: { kind: "retry", code: "CONNECTION_LOST", message: "gone" } })
      const { taken } = yield* takeWhileOffering(receipt("A"), [closed, receipt("B")])
      expect(taken).toEqual(["receipt A", "Closed"])
    }))
})
