import { Context, type Effect, type Option } from "effect"
import type { Contact, ContactDetails } from "../../../domain/Contact.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

/** A sighting of someone: at least one of their ids, and their name when it came along. */
export interface ContactSighting {
  readonly phone: string | null
  readonly lid: string | null
  readonly name: string | null
}

/** A contact as the Store keeps it: the details, and the URL of their picture when last asked. */
export interface StoredContact extends ContactDetails {
  readonly pictureUrl: string | null
}

/** What the network told of someone; absent fields are left as they were. */
export interface ContactDetailsPatch {
  readonly pushName?: string | null | undefined
  readonly about?: string | null | undefined
  readonly pictureUrl?: string | null | undefined
  readonly isBusiness?: boolean | undefined
  readonly blocked?: boolean | undefined
}

/**
 * The people each session knows. One row per person: keyed by the phone id when known, else
 * by the LID. A sighting that links a LID to a phone merges the LID-only row into the phone's.
 * Lookups take either id (`…@c.us` or `…@lid`).
 */
export class ContactRepo extends Context.Tag("switchboard/ContactRepo")<ContactRepo, {
  readonly see: (sessionId: string, sighting: ContactSighting) => Effect.Effect<void, StoreUnavailable>
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Contact>, StoreUnavailable>
  /** The person known by that id (their phone id or their LID). */
  readonly find: (sessionId: string, chatId: string) => Effect.Effect<Option.Option<StoredContact>, StoreUnavailable>
  /** Keeps what the network told; a person not known yet becomes known under that id. */
  readonly updateDetails: (sessionId: string, chatId: string, patch: ContactDetailsPatch) => Effect.Effect<void, StoreUnavailable>
  readonly setBlocked: (sessionId: string, chatId: string, blocked: boolean) => Effect.Effect<void, StoreUnavailable>
  /** Makes the Store's blocked flags match the network's blocklist. */
  readonly syncBlocklist: (sessionId: string, blocked: ReadonlyArray<string>) => Effect.Effect<void, StoreUnavailable>
  readonly blocklist: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<ContactDetails>, StoreUnavailable>
  readonly isBlocked: (sessionId: string, chatId: string) => Effect.Effect<boolean, StoreUnavailable>
}>() {}
