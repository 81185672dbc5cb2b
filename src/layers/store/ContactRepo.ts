import { type ContactDetailsPatch, ContactRepo, type ContactSighting, type StoredContact } from "../../runtime/ports/store/ContactRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Layer, Option } from "effect"
import type { Contact, ContactDetails } from "../../domain/Contact.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { fromIntegerBoolean, toIntegerBoolean } from "./columns.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"
import { makeReadCache } from "./readCache.js"
import { atomically } from "./atomically.js"

interface ContactRecord {
  readonly id: string
  readonly phone: string | null
  readonly lid: string | null
  readonly name: string | null
  readonly push_name: string | null
  readonly about: string | null
  readonly picture_url: string | null
  readonly is_business: unknown
  readonly blocked: unknown
  readonly updated_at: string
}

const toContact = (record: ContactRecord): Contact => ({
  id: record.id,
  phone: record.phone,
  lid: record.lid,
  name: record.name,
  updatedAt: record.updated_at
})

const toDetails = (record: ContactRecord): StoredContact => ({
  chatId: record.id,
  phone: record.phone,
  lid: record.lid,
  name: record.name,
  pushName: record.push_name,
  about: record.about,
  isBusiness: fromIntegerBoolean(record.is_business),
  blocked: fromIntegerBoolean(record.blocked),
  pictureUrl: record.picture_url
})

const publicDetails = ({ pictureUrl: _, ...details }: StoredContact): ContactDetails => details

/** The columns a patch sets: only the fields it names. */
const patchColumns = (patch: ContactDetailsPatch) => ({
  ...(patch.pushName === undefined ? {} : { push_name: patch.pushName }),
  ...(patch.about === undefined ? {} : { about: patch.about }),
  ...(patch.pictureUrl === undefined ? {} : { picture_url: patch.pictureUrl }),
  ...(patch.isBusiness === undefined ? {} : { is_business: toIntegerBoolean(patch.isBusiness) }),
  ...(patch.blocked === undefined ? {} : { blocked: toIntegerBoolean(patch.blocked) })
})

/**
 * The people each session knows. One row per person: keyed by the phone id when known, else
 * by the LID. A sighting that links a LID to a phone merges the LID-only row into the phone's,
 * with everything either row had learnt.
 */
export const SqlContactRepo = Layer.effect(
  ContactRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Every send asks whether its recipient is blocked: the answers are kept, per session, until a
    // write to that session's contacts.
    const blockedCache = makeReadCache<boolean>(sql)

    const load = (sessionId: string, ids: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<ContactRecord>, SqlError> =>
      sql<ContactRecord>`SELECT * FROM contacts WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`

    const byEitherId = (sessionId: string, chatId: string) =>
      sql<ContactRecord>`SELECT * FROM contacts WHERE session_id = ${sessionId} AND (id = ${chatId} OR lid = ${chatId} OR phone = ${chatId})
        ORDER BY id ASC LIMIT 1`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

    const see = Effect.fnUntraced(
      function*(sessionId: string, sighting: ContactSighting) {
        const seenAs = sighting.phone ?? sighting.lid
        if (seenAs === null) return
        const known = yield* sql<ContactRecord>`SELECT * FROM contacts WHERE session_id = ${sessionId}
          AND (id = ${seenAs} ${sighting.lid === null ? sql.literal("") : sql`OR lid = ${sighting.lid} OR id = ${sighting.lid}`})`
        const firstKnown = <K extends "phone" | "lid" | "name" | "push_name" | "about" | "picture_url">(column: K) =>
          known.find((c) => c[column] !== null)?.[column] ?? null
        const merged = {
          phone: sighting.phone ?? firstKnown("phone"),
          lid: sighting.lid ?? firstKnown("lid"),
          name: sighting.name ?? firstKnown("name")
        }
        // Keyed by the phone whenever it is known, whichever id this sighting came with.
        const id = merged.phone ?? merged.lid ?? seenAs
        const unchanged = known.length === 1 && known[0]!.id === id && known[0]!.phone === merged.phone &&
          known[0]!.lid === merged.lid && known[0]!.name === merged.name
        if (unchanged) return
        yield* blockedCache.invalidate(sessionId)
        // What the rows being merged learnt of the person goes to the merged row.
        const learnt = {
          push_name: firstKnown("push_name"),
          about: firstKnown("about"),
          picture_url: firstKnown("picture_url"),
          is_business: toIntegerBoolean(known.some((c) => fromIntegerBoolean(c.is_business))),
          blocked: toIntegerBoolean(known.some((c) => fromIntegerBoolean(c.blocked)))
        }
        if (known.length > 0) yield* sql`DELETE FROM contacts WHERE session_id = ${sessionId} AND id IN ${sql.in(known.map((c) => c.id))}`
        // Two sightings of a new contact at once (on Postgres, where they run side by side) both
        // find nothing: the second one updates the row the first one made.
        yield* sql`INSERT INTO contacts ${sql.insert({ session_id: sessionId, id, ...merged, ...learnt, updated_at: DateTime.formatIso(yield* DateTime.now) })}
          ON CONFLICT (session_id, id) DO UPDATE SET phone = excluded.phone, lid = excluded.lid, name = excluded.name,
          updated_at = excluded.updated_at`
      },
      // Every message received records its sender: inside its transaction, no savepoint of its own.
      atomically(sql),
      orStoreUnavailable
    )

    const list = Effect.fn("ContactRepo.list")(
      (sessionId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<Contact>, SqlError> =>
        listByRootIds(sql, {
          table: "contacts",
          where: sql`session_id = ${sessionId}`,
          orderBy: sql.literal("id ASC"),
          page,
          loadByIds: (ids) => Effect.map(load(sessionId, ids), (rows) => rows.map(toContact)),
          idOf: (contact) => contact.id
        }),
      orStoreUnavailable
    )

    const find = storeOperation(
      (sessionId: string, chatId: string) => Effect.map(byEitherId(sessionId, chatId), Option.map(toDetails)))

    const updateDetails = Effect.fnUntraced(
      function*(sessionId: string, chatId: string, patch: ContactDetailsPatch) {
        yield* blockedCache.invalidate(sessionId)
        const now = DateTime.formatIso(yield* DateTime.now)
        const known = yield* byEitherId(sessionId, chatId)
        if (Option.isSome(known)) {
          const columns = patchColumns(patch)
          if (Object.keys(columns).length === 0) return
          yield* sql`UPDATE contacts SET ${sql.update({ ...columns, updated_at: now })} WHERE session_id = ${sessionId} AND id = ${known.value.id}`
          return
        }
        const isLid = chatId.endsWith("@lid")
        yield* sql`INSERT INTO contacts ${sql.insert({
          session_id: sessionId,
          id: chatId,
          phone: isLid ? null : chatId,
          lid: isLid ? chatId : null,
          name: null,
          ...patchColumns(patch),
          updated_at: now
        })} ON CONFLICT (session_id, id) DO NOTHING`
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const syncBlocklist = Effect.fnUntraced(
      function*(sessionId: string, blocked: ReadonlyArray<string>) {
        yield* blockedCache.invalidate(sessionId)
        const wanted = new Set(blocked)
        const flagged = yield* sql<ContactRecord>`SELECT * FROM contacts WHERE session_id = ${sessionId} AND blocked = 1`
        const stale = flagged.filter((c) => !wanted.has(c.id) && !(c.lid !== null && wanted.has(c.lid)))
        if (stale.length > 0) {
          yield* sql`UPDATE contacts SET blocked = 0 WHERE session_id = ${sessionId} AND id IN ${sql.in(stale.map((c) => c.id))}`
        }
        yield* Effect.forEach(blocked, (chatId) => updateDetails(sessionId, chatId, { blocked: true }), { discard: true })
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const blocklist = Effect.fn("ContactRepo.blocklist")(
      (sessionId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<ContactDetails>, SqlError> =>
        listByRootIds(sql, {
          table: "contacts",
          where: sql`session_id = ${sessionId} AND blocked = 1`,
          orderBy: sql.literal("id ASC"),
          page,
          loadByIds: (ids) => Effect.map(load(sessionId, ids), (rows) => rows.map((row) => publicDetails(toDetails(row)))),
          idOf: (contact) => contact.chatId
        }),
      orStoreUnavailable
    )

    const isBlocked = storeOperation(
      (sessionId: string, chatId: string) =>
        blockedCache.read(sessionId, chatId, Effect.map(byEitherId(sessionId, chatId), Option.exists((row) => fromIntegerBoolean(row.blocked)))))

    return {
      see,
      list,
      find,
      updateDetails,
      setBlocked: (sessionId: string, chatId: string, blocked: boolean) => updateDetails(sessionId, chatId, { blocked }),
      syncBlocklist,
      blocklist,
      isBlocked
    } as const
  })
)
