import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import type { ContactDetails, LidLookup } from "../domain/Contact.js"
import { type EngineCallError, type EngineTimeout, NotFound, ServiceUnavailable, type StoreUnavailable } from "../domain/Errors.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { bestEffort } from "../runtime/bestEffort.js"
import { engineCall } from "../runtime/EngineCall.js"
import { MediaStore } from "../runtime/ports/MediaStore.js"
import { ContactRepo, type StoredContact } from "../runtime/ports/store/ContactRepo.js"
import { GroupRepo } from "../runtime/ports/store/GroupRepo.js"
import { groupNotFound } from "./Groups.js"
import { makeSessionCalls } from "./SessionCalls.js"

type Failure = EngineCallError | EngineTimeout | StoreUnavailable

export interface ContactProfilesService {
  /** What the session knows of the person, refreshed from the network when the session is ready. */
  readonly details: (sessionId: string, chatId: string) => Effect.Effect<ContactDetails, Failure>
  /** The URL of their picture (null: none, or hidden from the account). */
  readonly pictureUrl: (sessionId: string, chatId: string) => Effect.Effect<string | null, Failure>
  /** The picture's bytes (JPEG), kept in the media store once fetched; 404 PICTURE_NOT_FOUND when there is none. */
  readonly picture: (sessionId: string, chatId: string) => Effect.Effect<Uint8Array, Failure | ServiceUnavailable>
  readonly setBlocked: (sessionId: string, chatId: string, blocked: boolean) => Effect.Effect<ContactDetails, Failure>
  /** Who the account blocked: the network's list when the session is ready, else the Store's. */
  readonly blocklist: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<ContactDetails>, Failure>
  /** Both ids of a person named by one: what the session has learnt, else what the network says (then kept). */
  readonly lookupIds: (sessionId: string, chatId: string) => Effect.Effect<LidLookup, Failure>
}

export class ContactProfiles extends Context.Tag("switchboard/ContactProfiles")<ContactProfiles, ContactProfilesService>() {
  static readonly layer = Layer.effect(ContactProfiles, Effect.suspend(() => make))
}

const contactNotFound = (chatId: string) => new NotFound({ code: "CONTACT_NOT_FOUND", message: `this session knows nobody as ${chatId}` })
const pictureNotFound = (chatId: string) => new NotFound({ code: "PICTURE_NOT_FOUND", message: `${chatId} has no picture the account may see` })

const publicDetails = ({ pictureUrl: _, ...details }: StoredContact): ContactDetails => details

/** A picture's bytes are kept per session, contact and URL: a new picture has a new URL. */
const pictureKey = (sessionId: string, chatId: string, url: string) =>
  `${sessionId}/pictures/${createHash("sha256").update(`${chatId}\n${url}`).digest("hex")}.jpg`

const make = Effect.gen(function*() {
  const repo = yield* ContactRepo
  const groups = yield* GroupRepo
  const mediaStore = yield* MediaStore
  const { call, exists, isReady } = yield* makeSessionCalls

  const stored = (sessionId: string, chatId: string) =>
    Effect.flatMap(repo.find(sessionId, chatId), Option.match({ onNone: () => Effect.fail(contactNotFound(chatId)), onSome: Effect.succeed }))

  /** Asks the network for both ids and keeps them. */
  const resolve = (sessionId: string, chatId: string) =>
    call(sessionId, engineCall("ContactsResolveIds", { chatId })).pipe(
      Effect.tap(({ lid, phone }) => repo.see(sessionId, { phone, lid, name: null }))
    )

  const details = Effect.fn("ContactProfiles.details")(function*(sessionId: string, chatId: string) {
    if (yield* isReady(sessionId)) {
      const profile = yield* call(sessionId, engineCall("ContactsProfile", { chatId }))
      yield* repo.updateDetails(sessionId, chatId, profile)
      const known = yield* stored(sessionId, chatId)
      // A person known by one id only: the network may tell the other.
      if (known.lid === null || known.phone === null) yield* bestEffort("contacts: learning a contact's other id")(resolve(sessionId, chatId))
    }
    return publicDetails(yield* stored(sessionId, chatId))
  })

  /**
   * A group's picture is its members' to see: for a group the session is not in the network
   * answers "no picture", which would read as a member's group without one, so membership is
   * asked first (of the network when ready, as GET …/groups/{groupId} does, else of the Store).
   */
  const groupPictureUrl = (sessionId: string, groupId: string, ready: boolean) =>
    ready
      ? Effect.zipRight(call(sessionId, engineCall("GroupsGet", { groupId })), call(sessionId, engineCall("ContactsPictureUrl", { chatId: groupId })))
      : Effect.flatMap(groups.find(sessionId, groupId), Option.match({
        onNone: () => Effect.fail(groupNotFound(groupId)),
        // The Store keeps no group picture: known only while the session is ready.
        onSome: () => Effect.succeed(null)
      }))

  const pictureUrl = Effect.fn("ContactProfiles.pictureUrl")(function*(sessionId: string, chatId: string) {
    const ready = yield* isReady(sessionId)
    if (chatId.endsWith("@g.us")) return yield* groupPictureUrl(sessionId, chatId, ready)
    if (!ready) return Option.getOrNull(yield* repo.find(sessionId, chatId))?.pictureUrl ?? null
    const url = yield* call(sessionId, engineCall("ContactsPictureUrl", { chatId }))
    yield* repo.updateDetails(sessionId, chatId, { pictureUrl: url })
    return url
  })

  const mediaUnavailable = (error: { readonly message: string }) =>
    Effect.zipRight(
      Effect.logError("media store failed", error.message),
      Effect.fail(new ServiceUnavailable({ code: "MEDIA_STORE_UNAVAILABLE", message: "the media store cannot be reached; try again" }))
    )

  const picture = Effect.fn("ContactProfiles.picture")(function*(sessionId: string, chatId: string) {
    const url = yield* pictureUrl(sessionId, chatId)
    if (url === null) return yield* pictureNotFound(chatId)
    const key = pictureKey(sessionId, chatId, url)
    const cached = yield* mediaStore.read(key).pipe(Effect.catchAll(mediaUnavailable))
    if (Option.isSome(cached)) return cached.value
    const bytes = yield* call(sessionId, engineCall("ContactsDownloadPicture", { url }))
    yield* mediaStore.put(key, bytes).pipe(Effect.catchAll(mediaUnavailable))
    return bytes
  })

  const service: ContactProfilesService = {
    details,
    pictureUrl,
    picture,
    setBlocked: Effect.fn("ContactProfiles.setBlocked")(function*(sessionId, chatId, blocked) {
      yield* call(sessionId, engineCall("ContactsSetBlocked", { chatId, blocked }))
      yield* repo.setBlocked(sessionId, chatId, blocked)
      return publicDetails(yield* stored(sessionId, chatId))
    }),
    blocklist: Effect.fn("ContactProfiles.blocklist")(function*(sessionId, page) {
      if (yield* isReady(sessionId)) yield* repo.syncBlocklist(sessionId, yield* call(sessionId, engineCall("ContactsBlocklist", {})))
      return yield* repo.blocklist(sessionId, page)
    }),
    lookupIds: Effect.fn("ContactProfiles.lookupIds")(function*(sessionId, chatId) {
      yield* exists(sessionId)
      const known = yield* repo.find(sessionId, chatId)
      const learnt = Option.isSome(known) && known.value.lid !== null && known.value.phone !== null
        ? known.value
        : yield* resolve(sessionId, chatId)
      return { lid: learnt.lid, phone: learnt.phone, chatId: learnt.phone ?? learnt.lid ?? chatId }
    })
  }
  return service
})
