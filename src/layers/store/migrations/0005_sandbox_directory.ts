import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The sandbox network's directory (see `SandboxLedger.putRecord`): its groups and channels, and
 * per session its labels and business flag. One JSON record per thing, written whole on each
 * change: the directory of a test network is small, and a record is read only on start.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE sandbox_directory (
    kind TEXT NOT NULL,
    record_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (kind, record_id)
  )`
})
