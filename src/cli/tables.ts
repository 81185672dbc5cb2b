/**
 * Every table of the Store, parents before children (foreign keys hold at every insert), each
 * with the columns that identify a row: what a migration orders by and skips when the target
 * has it already. `effect_sql_migrations` is not copied: each side runs its own migrations.
 */
export interface TableSpec {
  readonly name: string
  readonly key: ReadonlyArray<string>
  /** No unique key in the schema: rows already in the target are found by these columns. */
  readonly keyless?: true
}

export const tables: ReadonlyArray<TableSpec> = [
  { name: "sessions", key: ["id"] },
  { name: "engine_auth", key: ["session_id", "kind", "key_id"] },
  { name: "messages", key: ["id"] },
  { name: "message_status_history", key: ["message_id", "status", "at"], keyless: true },
  { name: "message_reactions", key: ["message_id", "from_id"] },
  { name: "batches", key: ["id"] },
  { name: "api_keys", key: ["id"] },
  { name: "sandbox_phone_owners", key: ["phone"] },
  { name: "sandbox_held_events", key: ["session_id", "event_key"] },
  { name: "sandbox_sent_messages", key: ["engine_message_id"] },
  { name: "sandbox_directory", key: ["kind", "record_id"] },
  { name: "chat_groups", key: ["session_id", "id"] },
  { name: "group_participants", key: ["session_id", "group_id", "participant_id"] },
  { name: "channels", key: ["session_id", "id"] },
  { name: "labels", key: ["session_id", "id"] },
  { name: "chat_labels", key: ["session_id", "chat_id", "label_id"] },
  { name: "contacts", key: ["session_id", "id"] },
  { name: "events", key: ["id"] },
  { name: "webhooks", key: ["id"] },
  { name: "webhook_deliveries", key: ["id"] },
  { name: "webhook_attempts", key: ["delivery_id", "attempt"] },
  { name: "audit_log", key: ["id"] }
]
