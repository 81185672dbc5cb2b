import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import type { Presence, PresenceState } from "../../domain/Message.js"
import { PresenceRepo } from "../../runtime/ports/store/PresenceRepo.js"
import { storeOperation } from "./storeFailure.js"

interface PresenceRecord {
  readonly chat_id: string
  readonly state: PresenceState
  readonly last_seen: string | null
  readonly updated_at: string
}

export const SqlPresenceRepo = Layer.effect(
  PresenceRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A last-seen time is kept until a newer one comes: "typing" says nothing about it. */
    const record = storeOperation(
      (sessionId: string, presence: Presence) =>
        sql`INSERT INTO presence ${sql.insert({
          session_id: sessionId,
          chat_id: presence.chatId,
          state: presence.state,
          last_seen: presence.lastSeen,
          updated_at: presence.updatedAt
        })}
          ON CONFLICT (session_id, chat_id) DO UPDATE SET state = excluded.state,
            last_seen = COALESCE(excluded.last_seen, presence.last_seen), updated_at = excluded.updated_at`.pipe(Effect.asVoid))

    const find = storeOperation(
      (sessionId: string, chatId: string) =>
        sql<PresenceRecord>`SELECT chat_id, state, last_seen, updated_at FROM presence
          WHERE session_id = ${sessionId} AND chat_id = ${chatId}`.pipe(
          Effect.map((rows) =>
            Option.map(Option.fromNullable(rows[0]), (row): Presence => ({
              chatId: row.chat_id,
              state: row.state,
              lastSeen: row.last_seen,
              updatedAt: row.updated_at
            }))
          )
        ))

    return { record, find }
  })
)
