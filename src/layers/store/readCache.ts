import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Rows kept per cache; past it the cache starts afresh (the hot rows come back at once). */
const CAPACITY = 10_000

/**
 * A read-through cache for a read on every send (the session, the recipient's block flag),
 * emptied for a group (a session) by the repository's own writes to it. Only on SQLite: one
 * process owns the file, so every write to those rows goes through this repository. On Postgres
 * other runners write too, and every read goes to the database.
 *
 * What is kept is committed: a read inside a transaction (it may see its own uncommitted writes)
 * is not kept, and a read that raced a write (the write's invalidation came while it ran) is not
 * kept either. A write invalidates as it runs, before it commits: a read after it waits for the
 * connection (SQLite has one) and so sees the commit, or the rollback.
 */
export const makeReadCache = <A>(sql: SqlClient.SqlClient) => {
  const enabled = sql.onDialectOrElse({ sqlite: () => true, orElse: () => false })
  const groups = new Map<string, Map<string, A>>()
  const generations = new Map<string, number>()
  let size = 0

  const generationOf = (group: string) => generations.get(group) ?? 0

  const read = <E, R>(group: string, key: string, load: Effect.Effect<A, E, R>, keep: (value: A) => boolean = () => true) =>
    !enabled
      ? load
      : Effect.suspend(() => {
        const entries = groups.get(group)
        if (entries?.has(key)) return Effect.succeed(entries.get(key) as A)
        const generation = generationOf(group)
        return Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (open) =>
          Effect.tap(load, (value) => {
            if (open._tag === "Some" || generationOf(group) !== generation || !keep(value)) return
            if (size >= CAPACITY) {
              groups.clear()
              size = 0
            }
            const kept = groups.get(group) ?? new Map<string, A>()
            groups.set(group, kept)
            if (!kept.has(key)) size++
            kept.set(key, value)
          }))
      })

  /** Whatever is kept for the group goes, and a read of it still running is not kept. */
  const invalidate = (group: string) =>
    Effect.sync(() => {
      generations.set(group, generationOf(group) + 1)
      size -= groups.get(group)?.size ?? 0
      groups.delete(group)
    })

  return { read, invalidate }
}
