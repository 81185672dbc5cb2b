import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { CachedCopies } from "../CachedCopies.js"
import { listenScoped, notify, postgresOf } from "./postgresChannel.js"

/** The Postgres channel on which runners tell each other which cached copies changed. */
const CHANNEL = "switchboard_changes"

/**
 * Key lookups and other cached copies in a cluster: a change made on one runner is announced
 * with `pg_notify` (in the changing transaction, when there is one), and every runner forgets
 * its copies of that topic when it hears of it.
 */
export const ClusterCachedCopiesLive: Layer.Layer<CachedCopies, never, SqlClient.SqlClient> = Layer.effect(
  CachedCopies,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* postgresOf(sql)
    return CachedCopies.of({
      // The other runners' copies then expire on their own (within seconds).
      changed: (topic) =>
        notify(sql, CHANNEL, topic).pipe(
          Effect.catchTag("StoreUnavailable", (outage) => Effect.logWarning("could not tell the other runners of a change", outage.message))
        ),
      onChange: (topic, forget) => listenScoped(pg, CHANNEL, (changed) => (changed === topic ? forget : Effect.void))
    })
  })
)
