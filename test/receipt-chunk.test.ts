import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Runtime } from "effect"
import type { DomainEvent } from "../src/domain/Events.js"
import { EngineEvent } from "../src/runtime/Engine.js"
import { applyReceipts, type Receipt } from "../src/runtime/InboundEvents.js"
import { MessageRepo } from "../src/runtime/ports/store/MessageRepo.js"
import { messageRow } from "./support/fixtures.js"
import { withSessionStore } from "./support/inboundStore.js"
import { countStatements, perUnitTable } from "./support/statementLedger.js"

/**
 * Receipts that come together (one chunk of a session's events) are applied together (issue 19):
 * a few statements for the whole chunk, with each receipt's meaning kept (a status never goes
 * back, a repeated or out-of-order receipt changes nothing it should not, events in order).
 * On a real SQLite file; store.test.ts checks the same moves on Postgres too.
 */

const outbound = (id: string) =>
  messageRow("s1", id, { from: "15550001111@c.us", engineMessageId: `E-${id}` })

const receipt = (id: string, status: Receipt["status"], error?: Receipt["error"]): Receipt =>
  EngineEvent.MessageStatusChanged({ engineMessageId: `E-${id}`, status, error })

const insertOutbound = (ids: ReadonlyArray<string>) =>
  Effect.flatMap(MessageRepo, (messages) => Effect.forEach(ids, (id) => messages.insert(outbound(id)), { discard: true }))

/** An event as a short line: its kind, the message and, for an ack, the move. */
const describeEvent = (event: DomainEvent) => {
  const data = event.data as Record<string, any>
  switch (event.event) {
    case "message.sent":
      return `sent ${data.message.id} (${data.message.statusHistory.map((h: { status: string }) => h.status).join(">")})`
    case "message.ack":
      return `ack ${data.messageId} ${data.previousStatus}>${data.status}`
    case "message.failed":
      return `failed ${data.messageId} ${data.error.code}`
    default:
      return event.event
  }
}

describe("a chunk of receipts", () => {
  it.scopedLive("costs the same few statements whatever its size", () =>
    withSessionStore({}, (seen) =>
      Effect.gen(function*() {
        const ids = Array.from({ length: 20 }, (_, i) => `m${i}`)
        yield* insertOutbound([...ids, "warm"])
        yield* applyReceipts("s1", [receipt("warm", "sent")]) // prepares the statements
        const run = Runtime.runPromise(yield* Effect.runtime<Effect.Effect.Context<ReturnType<typeof applyReceipts>>>())
        const reading = yield* Effect.promise(() => countStatements(() => run(applyReceipts("s1", ids.map((id) => receipt(id, "sent"))))))
        console.log(perUnitTable("20 sent receipts in one chunk", reading, 20))
        // BEGIN, the moves, their history, the reactions message.sent carries, the events, COMMIT.
        // One by one it was 4 a receipt (82 for these 20).
        expect(reading.total).toBeLessThanOrEqual(6)
        const events = (yield* seen).filter((event) => event.event.startsWith("message."))
        expect(events).toHaveLength(2 * 21)
        expect(events.slice(2, 6).map(describeEvent)).toEqual(["sent m0 (pending>sent)", "ack m0 pending>sent", "sent m1 (pending>sent)", "ack m1 pending>sent"])
      })))

  it.scopedLive("moves statuses, records history and announces as one receipt after another would", () =>
    withSessionStore({}, (seen) =>
      Effect.gen(function*() {
        yield* insertOutbound(["a", "b", "c", "d"])
        yield* applyReceipts("s1", [
          receipt("a", "sent"),
          receipt("b", "sent"),
          receipt("a", "delivered"),
          receipt("a", "sent"), // repeated, and behind: nothing
          receipt("c", "read"), // ahead of the receipts before it (pending > read)
          receipt("x", "sent"), // a message the gateway does not know
          receipt("d", "failed", { code: "463", message: "restricted" }),
          receipt("b", "delivered"),
          receipt("b", "sent") // behind: nothing
        ])
        const messages = yield* MessageRepo
        const lifeOf = (id: string) =>
          Effect.map(messages.findById("s1", id), (found) => {
            const message = Option.getOrThrow(found)
            return { status: message.status, ack: message.ack, error: message.error, history: message.statusHistory.map((h) => h.status) }
          })
        expect(yield* lifeOf("a")).toEqual({ status: "delivered", ack: 2, error: null, history: ["pending", "sent", "delivered"] })
        expect(yield* lifeOf("b")).toEqual({ status: "delivered", ack: 2, error: null, history: ["pending", "sent", "delivered"] })
        expect(yield* lifeOf("c")).toEqual({ status: "read", ack: 3, error: null, history: ["pending", "read"] })
        expect(yield* lifeOf("d")).toEqual({
          status: "failed",
          ack: -1,
          error: { code: "463", message: "restricted" },
          history: ["pending", "failed"]
        })
        const announced = (yield* seen).filter((event) => event.event.startsWith("message.")).map(describeEvent)
        expect(announced).toEqual([
          "sent a (pending>sent)",
          "ack a pending>sent",
          "sent b (pending>sent)",
          "ack b pending>sent",
          "ack a sent>delivered",
          "sent c (pending>read)",
          "ack c pending>read",
          "ack d pending>failed",
          "failed d 463",
          "ack b sent>delivered"
        ])
      })))
})
