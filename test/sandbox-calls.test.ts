import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, TestClock } from "effect"
import { SandboxNetwork } from "../src/runtime/engines/sandbox/SandboxNetwork.js"
import { drained, openReady, sandbox, waitFor } from "./support/sandboxSessions.js"

/** Calls on the sandbox network at the engine's boundary: ringing, rejecting, timing out. */
describe("sandbox calls", () => {
  it.scoped("a ringing call times out by itself after the network's call timeout", () =>
    Effect.gen(function*() {
      const network = yield* SandboxNetwork
      const bob = yield* openReady("calls-bob")
      const rung = yield* network.ring(bob.sessionId, { chatId: "4915100000009@c.us" }, false)
      const offer = yield* waitFor(bob, "CallChanged")
      expect(offer.call).toMatchObject({ callId: rung.callId, from: "4915100000009@c.us", status: "offer", isVideo: false })
      yield* TestClock.adjust("29 seconds")
      expect((yield* drained(bob)).filter((event) => event._tag === "CallChanged")).toEqual([])
      yield* TestClock.adjust("1 second")
      const ended = yield* waitFor(bob, "CallChanged")
      expect(ended.call).toMatchObject({ callId: rung.callId, status: "timeout" })
      // over: it can no longer be rejected
      const late = yield* Effect.exit(bob.connection.calls.reject(rung.callId, "4915100000009@c.us"))
      expect(Exit.isFailure(late) && JSON.stringify(late.cause)).toContain("CALL_NOT_RINGING")
    }).pipe(Effect.provide(sandbox({ callTimeout: "30 seconds" }))))

  it.scoped("the callee rejects a call from another session; only the callee's engine tells of the call, the caller's logs nothing", () =>
    Effect.gen(function*() {
      const network = yield* SandboxNetwork
      const alice = yield* openReady("calls-alice")
      const bob = yield* openReady("calls-bob")
      const rung = yield* network.ring(bob.sessionId, { sessionId: alice.sessionId }, true)
      expect((yield* waitFor(bob, "CallChanged")).call).toMatchObject({ from: alice.chatId, isVideo: true, status: "offer" })
      yield* bob.connection.calls.reject(rung.callId, alice.chatId)
      expect((yield* waitFor(bob, "CallChanged")).call).toMatchObject({ callId: rung.callId, status: "reject" })
      // a CallChanged to alice would enter her call log as a call she received
      expect((yield* drained(alice)).filter((event) => event._tag === "CallChanged")).toEqual([])
      // another session cannot reject bob's call, and a session that is not ready cannot be rung
      const notHers = yield* Effect.exit(alice.connection.calls.reject(rung.callId, bob.chatId))
      expect(Exit.isFailure(notHers) && JSON.stringify(notHers.cause)).toContain("CALL_NOT_FOUND")
      yield* bob.goOffline
      const away = yield* Effect.exit(network.ring(bob.sessionId, { chatId: "4915100000009@c.us" }, false))
      expect(Exit.isFailure(away) && JSON.stringify(away.cause)).toContain("SESSION_NOT_READY")
    }).pipe(Effect.provide(sandbox())))
})
