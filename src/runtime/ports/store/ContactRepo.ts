import { Context, type Effect, type Option } from "effect"
import type { Contact } from "../../../domain/Contact.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

/** A sighting of someone: at least one of their ids, and their name when it came along. */
export interface ContactSighting {
  readonly phone: string | null
  readonly lid: string | null
  readonly name: string | null
}

/**
 * The people each session knows. One row per person: keyed by the phone id when known, else
 * by the LID. A sighting that links a LID to a phone merges the LID-only row into the phone's.
 */
export class ContactRepo extends Context.Tag("switchboard/ContactRepo")<ContactRepo, {
  readonly see: (sessionId: string, sighting: ContactSighting) => Effect.Effect<void, StoreUnavailable>
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Contact>, StoreUnavailable>
}>() {}
