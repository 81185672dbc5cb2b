import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { decodeHeld, decodeSent, encodeHeld, encodeSent, SandboxLedger } from "../../runtime/engines/sandbox/Ledger.js"

/**
 * The sandbox network's memory in the Store, so that messages held for an offline sandbox
 * session, and the receipts owed to their senders, survive a restart of the gateway.
 */
export const SqlSandboxLedger = Layer.effect(
  SandboxLedger,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return SandboxLedger.of({
      load: Effect.gen(function*() {
        const owners = yield* sql<{ phone: string; session_id: string }>`SELECT phone, session_id FROM sandbox_phone_owners`
        const held = yield* sql<{ session_id: string; events: string }>`SELECT session_id, events FROM sandbox_held_events`
        const sent = yield* sql<{ engine_message_id: string; message: string }>`SELECT engine_message_id, message FROM sandbox_sent_messages`
        return {
          phoneOwners: owners.map((row) => [row.phone, row.session_id] as const),
          held: held.map((row) => [row.session_id, decodeHeld(row.events)] as const),
          sent: sent.map((row) => [row.engine_message_id, decodeSent(row.message)] as const)
        }
      }).pipe(Effect.orDie),
      rememberOwner: (phone, sessionId) =>
        sql`INSERT INTO sandbox_phone_owners (phone, session_id) VALUES (${phone}, ${sessionId})
          ON CONFLICT (phone) DO UPDATE SET session_id = excluded.session_id`.pipe(Effect.asVoid, Effect.orDie),
      hold: (sessionId, events) =>
        (events.length === 0
          ? sql`DELETE FROM sandbox_held_events WHERE session_id = ${sessionId}`
          : sql`INSERT INTO sandbox_held_events (session_id, events) VALUES (${sessionId}, ${encodeHeld(events)})
            ON CONFLICT (session_id) DO UPDATE SET events = excluded.events`).pipe(Effect.asVoid, Effect.orDie),
      recordSent: (engineMessageId, message) =>
        sql`INSERT INTO sandbox_sent_messages (engine_message_id, message) VALUES (${engineMessageId}, ${encodeSent(message)})
          ON CONFLICT (engine_message_id) DO UPDATE SET message = excluded.message`.pipe(Effect.asVoid, Effect.orDie)
    })
  })
)
