import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Stream } from "effect"
import { makeWatchedState } from "../src/runtime/WatchedState.js"

/** A session's live state (`GET …/status`, awaiting a status) is a WatchedState: what its watchers see. */
describe("WatchedState", () => {
  it.live("a watcher sees the value as it is when it starts watching, then every change in order", () =>
    Effect.gen(function*() {
      const state = makeWatchedState("created")
      // Changed before anyone watched: nothing is kept for watchers, the value is.
      yield* state.set("initializing")
      expect(yield* state.get).toBe("initializing")
      const first = yield* Effect.fork(Stream.runCollect(Stream.take(state.changes, 3)))
      const second = yield* Effect.fork(Stream.runCollect(Stream.take(state.changes, 3)))
      // Both are watching once their streams are running.
      yield* Effect.sleep("50 millis")
      yield* state.set("qr_ready")
      yield* state.update((status) => `${status}→ready`)
      expect(Chunk.toReadonlyArray(yield* Fiber.join(first).pipe(Effect.timeout("2 seconds")))).toEqual(["initializing", "qr_ready", "qr_ready→ready"])
      expect(Chunk.toReadonlyArray(yield* Fiber.join(second).pipe(Effect.timeout("2 seconds")))).toEqual(["initializing", "qr_ready", "qr_ready→ready"])
      expect(yield* state.get).toBe("qr_ready→ready")
    }))
})
