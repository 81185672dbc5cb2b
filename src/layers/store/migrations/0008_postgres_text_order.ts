import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Text sorts the same on Postgres as on SQLite: by code point (SQLite's BINARY), whatever the
 * database's own collation (en_US and ICU collations put "apple" before "Banana", ignore or
 * reorder punctuation, …). Lists are paged in that order and `id > ?` resumes from it, so the
 * columns that are sorted or compared with < and > get Postgres' "C" collation. Equality, and
 * so every key and lookup, is the same under either; only the order changes (their indexes are
 * rebuilt with it). Nothing to do on SQLite.
 *
 * A later migration adding such a column on Postgres says `COLLATE "C"` for it the same way.
 */
export const orderedTextColumns: ReadonlyArray<readonly [table: string, column: string]> = [
  ["sessions", "created_at"],
  ["sessions", "id"],
  ["messages", "timestamp"],
  ["messages", "created_at"],
  ["messages", "id"],
  ["events", "id"],
  ["events", "at"],
  ["webhooks", "created_at"],
  ["webhooks", "id"],
  ["webhook_deliveries", "next_attempt_at"],
  ["webhook_deliveries", "created_at"],
  ["webhook_deliveries", "id"],
  ["chat_groups", "subject"],
  ["chat_groups", "id"],
  ["group_participants", "participant_id"],
  ["channels", "name"],
  ["channels", "id"],
  ["labels", "name"],
  ["labels", "id"],
  ["contacts", "id"]
]

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.forEach(
        orderedTextColumns,
        ([table, column]) => sql`ALTER TABLE ${sql(table)} ALTER COLUMN ${sql(column)} TYPE TEXT COLLATE "C"`,
        { discard: true }
      ),
    orElse: () => Effect.void
  })
})
