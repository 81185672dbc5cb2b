import { describe, expect, it } from "@effect/vitest"
import { Data, Effect, Exit, Fiber, Schedule, TestClock } from "effect"
import { retryAfterFailure } from "../src/runtime/retryAfterFailure.js"

class Flaky extends Data.TaggedError("Flaky")<{ readonly transient: boolean }> {}

/** An effect that fails with `failures` in turn, then succeeds; it records when each attempt ran. */
const attempts = (failures: ReadonlyArray<Flaky>) => {
  const at: Array<number> = []
  const effect = Effect.flatMap(TestClock.currentTimeMillis, (now) => {
    at.push(now)
    const failure = failures[at.length - 1]
    return failure === undefined ? Effect.succeed(at.length) : Effect.fail(failure)
  })
  return { effect, at }
}

// The lane's schedule for a transient engine error: 500 ms, doubling, four retries.
const schedule = Schedule.exponential("500 millis").pipe(Schedule.intersect(Schedule.recurs(4)))
const transient = (error: Flaky) => error.transient

describe("retryAfterFailure", () => {
  it.effect("retries at the schedule's delays, as Effect.retry would, once the effect has failed", () =>
    Effect.gen(function*() {
      const { at, effect } = attempts([new Flaky({ transient: true }), new Flaky({ transient: true })])
      const fiber = yield* Effect.fork(retryAfterFailure(effect, { schedule, while: transient }))
      yield* TestClock.adjust("10 seconds")
      expect(yield* Fiber.join(fiber)).toBe(3)
      expect(at).toEqual([0, 500, 1500])
    }))

  it.effect("gives up when the schedule does, with the last failure", () =>
    Effect.gen(function*() {
      const { at, effect } = attempts(Array.from({ length: 10 }, () => new Flaky({ transient: true })))
      const fiber = yield* Effect.fork(Effect.exit(retryAfterFailure(effect, { schedule, while: transient })))
      yield* TestClock.adjust("1 minute")
      expect(Exit.isFailure(yield* Fiber.join(fiber))).toBe(true)
      expect(at).toEqual([0, 500, 1500, 3500, 7500])
    }))

  it.effect("runs a succeeding effect once, and passes a failure it must not retry straight through", () =>
    Effect.gen(function*() {
      const ok = attempts([])
      expect(yield* retryAfterFailure(ok.effect, { schedule, while: transient })).toBe(1)
      expect(ok.at).toEqual([0])
      const refused = attempts([new Flaky({ transient: false })])
      const exit = yield* Effect.exit(retryAfterFailure(refused.effect, { schedule, while: transient }))
      expect(exit).toEqual(Exit.fail(new Flaky({ transient: false })))
      expect(refused.at).toEqual([0])
    }))
})
