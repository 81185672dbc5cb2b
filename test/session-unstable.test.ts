import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { advanceUntil, type Core, createAndLink, quickReconnect as reconnect, startCore, statusIs } from "./support/core.js"

/**
 * Issue 21, point 5: a session that reconnects more than 5 times in 10 minutes announces
 * `session.unstable {reconnects, window, reason}` once, and says UNSTABLE in its `lastError`
 * (with the cause of the latest disconnect) for as long as it stays over the line. On the
 * sandbox network, whose connections the test drops; on the TestClock, so minutes pass at once.
 */

/**
 * The connection dropped, the session back to ready, then a minute of being ready (which
 * earns the reconnect budget back, as a flapping session that stays up for a while does).
 */
const dropAndRecover = (core: Core, id: string) =>
  Effect.gen(function*() {
    yield* core.network.dropConnection(id)
    yield* advanceUntil(statusIs(core, id, "disconnected"), "1 millis", 100)
    yield* advanceUntil(statusIs(core, id, "ready"))
    yield* TestClock.adjust("1 minute")
  })

const unstableEvents = (core: Core, id: string) =>
  Effect.map(core.events(id), (events) => events.filter((e) => e.event === "session.unstable").map((e) => e.data))

describe("an unstable session (more than 5 reconnects in 10 minutes)", () => {
  it.scoped("5 reconnects in 10 minutes: no announcement, lastError is the cause", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const id = yield* createAndLink(core, "five")
      for (let i = 0; i < 5; i++) yield* dropAndRecover(core, id)
      expect(yield* unstableEvents(core, id)).toEqual([])
      expect((yield* core.sessions.get(id)).lastError?.code).toBe("CONNECTION_LOST")
    }))

  it.scoped("the 6th announces session.unstable once, with the count; lastError says UNSTABLE until the window clears", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const id = yield* createAndLink(core, "six")
      for (let i = 0; i < 6; i++) yield* dropAndRecover(core, id)
      expect(yield* unstableEvents(core, id)).toEqual([{ reconnects: 6, window: 600, reason: "CONNECTION_LOST" }])
      const unstable = (yield* core.sessions.get(id)).lastError
      expect(unstable?.code).toBe("UNSTABLE")
      expect(unstable?.message).toContain("reconnected 6 times in the last 10 minutes")
      expect(unstable?.message).toContain("CONNECTION_LOST")
      // The session is still usable: it is ready, and the status events name the real cause.
      expect((yield* core.sessions.get(id)).status).toBe("ready")
      const disconnects = (yield* core.events(id)).filter((e) => e.event === "session.status" && e.data.status === "disconnected")
      expect(disconnects.map((e) => e.event === "session.status" && e.data.reason)).toEqual(Array(6).fill("CONNECTION_LOST"))

      // A 7th within the window: still unstable (lastError counts it), no second announcement.
      yield* dropAndRecover(core, id)
      expect(yield* unstableEvents(core, id)).toHaveLength(1)
      expect((yield* core.sessions.get(id)).lastError?.message).toContain("reconnected 7 times")

      // Ten quiet minutes later the window has cleared: one reconnect is a blip again…
      yield* TestClock.adjust("10 minutes")
      yield* dropAndRecover(core, id)
      expect((yield* core.sessions.get(id)).lastError?.code).toBe("CONNECTION_LOST")
      // …and crossing the line again is news again.
      for (let i = 0; i < 5; i++) yield* dropAndRecover(core, id)
      expect((yield* unstableEvents(core, id)).map((data) => data.reconnects)).toEqual([6, 6])
    }))

  it.scoped("reconnects spread over more than 10 minutes never make a session unstable", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const id = yield* createAndLink(core, "spread")
      for (let i = 0; i < 8; i++) {
        yield* dropAndRecover(core, id)
        yield* TestClock.adjust("1 minute")
      }
      expect(yield* unstableEvents(core, id)).toEqual([])
      expect((yield* core.sessions.get(id)).lastError?.code).toBe("CONNECTION_LOST")
    }))
})
