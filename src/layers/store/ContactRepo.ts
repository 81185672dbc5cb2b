import { ContactRepo, type ContactSighting } from "../../runtime/ports/store/ContactRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Layer, type Option } from "effect"
import type { Contact } from "../../domain/Contact.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable } from "./storeFailure.js"

interface ContactRecord {
  readonly id: string
  readonly phone: string | null
  readonly lid: string | null
  readonly name: string | null
  readonly updated_at: string
}

const toContact = (record: ContactRecord): Contact => ({
  id: record.id,
  phone: record.phone,
  lid: record.lid,
  name: record.name,
  updatedAt: record.updated_at
})

/**
 * The people each session knows. One row per person: keyed by the phone id when known, else
 * by the LID. A sighting that links a LID to a phone merges the LID-only row into the phone's.
 */
export const SqlContactRepo = Layer.effect(
  ContactRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const load = (sessionId: string, ids: ReadonlyArray<string>): Effect.Effect<Array<Contact>, SqlError> =>
      Effect.map(sql<ContactRecord>`SELECT * FROM contacts WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`, (rows) => rows.map(toContact))

    const see = Effect.fn("ContactRepo.see")(
      function*(sessionId: string, sighting: ContactSighting) {
        const seenAs = sighting.phone ?? sighting.lid
        if (seenAs === null) return
        const known = yield* sql<ContactRecord>`SELECT * FROM contacts WHERE session_id = ${sessionId}
          AND (id = ${seenAs} ${sighting.lid === null ? sql.literal("") : sql`OR lid = ${sighting.lid} OR id = ${sighting.lid}`})`
        const merged = {
          phone: sighting.phone ?? known.find((c) => c.phone !== null)?.phone ?? null,
          lid: sighting.lid ?? known.find((c) => c.lid !== null)?.lid ?? null,
          name: sighting.name ?? known.find((c) => c.name !== null)?.name ?? null
        }
        // Keyed by the phone whenever it is known, whichever id this sighting came with.
        const id = merged.phone ?? merged.lid ?? seenAs
        const unchanged = known.length === 1 && known[0]!.id === id && known[0]!.phone === merged.phone &&
          known[0]!.lid === merged.lid && known[0]!.name === merged.name
        if (unchanged) return
        if (known.length > 0) yield* sql`DELETE FROM contacts WHERE session_id = ${sessionId} AND id IN ${sql.in(known.map((c) => c.id))}`
        // Two sightings of a new contact at once (on Postgres, where they run side by side) both
        // find nothing: the second one updates the row the first one made.
        yield* sql`INSERT INTO contacts ${sql.insert({ session_id: sessionId, id, ...merged, updated_at: DateTime.formatIso(yield* DateTime.now) })}
          ON CONFLICT (session_id, id) DO UPDATE SET phone = excluded.phone, lid = excluded.lid, name = excluded.name,
          updated_at = excluded.updated_at`
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const list = Effect.fn("ContactRepo.list")(
      (sessionId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<Contact>, SqlError> =>
        listByRootIds(sql, {
          table: "contacts",
          where: sql`session_id = ${sessionId}`,
          orderBy: sql.literal("id ASC"),
          page,
          loadByIds: (ids) => load(sessionId, ids),
          idOf: (contact) => contact.id
        }),
      orStoreUnavailable
    )

    return { see, list } as const
  })
)
