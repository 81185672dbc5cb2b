import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The due deliveries of one webhook, oldest first, read straight off an index: the dispatcher
 * claims each webhook's share of its due deliveries with one short range scan, rather than
 * ranking every due delivery of every webhook at each claim (milliseconds with a backlog of
 * thousands, and the dispatcher claims hundreds of times a second).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX webhook_deliveries_webhook_due_idx ON webhook_deliveries (webhook_id, status, next_attempt_at, id)`
})
