import { StoreUnavailable } from "../../domain/Errors.js"
import type { SqlClient } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Effect, Schedule, Stream } from "effect"

/**
 * The Store's client as a Postgres client, for `LISTEN/NOTIFY` between runners. In a cluster
 * it always is one (the settings refuse another `DATABASE_URL`).
 */
export const postgresOf = (sql: SqlClient.SqlClient): Effect.Effect<PgClient.PgClient> => {
  const pg = sql as PgClient.PgClient
  return typeof pg.listen === "function" ? Effect.succeed(pg) : Effect.dieMessage("CLUSTER=on needs the Store on Postgres")
}

/** `pg_notify` as a statement, so that inside a transaction it is sent when (and if) it commits. */
export const notify = (sql: SqlClient.SqlClient, channel: string, payload: string) =>
  sql`SELECT pg_notify(${channel}, ${payload})`.pipe(
    Effect.asVoid,
    Effect.mapError((error) => new StoreUnavailable({ message: `the Store failed: ${error.message}` }))
  )

/** Runs `handle` for every notification on `channel` for the life of the scope, listening again after a drop. */
export const listenScoped = <R>(pg: PgClient.PgClient, channel: string, handle: (payload: string) => Effect.Effect<void, never, R>) =>
  pg.listen(channel).pipe(
    Stream.runForEach(handle),
    Effect.tapErrorCause((cause) => Effect.logWarning(`the cluster's ${channel} feed was interrupted; listening again`, cause)),
    Effect.retry(Schedule.spaced("1 second")),
    Effect.forkScoped,
    Effect.asVoid
  )
