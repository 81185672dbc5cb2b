import type { GroupMetadata } from "@whiskeysockets/baileys"
import { Effect, Option, Runtime } from "effect"
import type { CacheService } from "../../ports/Cache.js"
import type { PhoneOfLid } from "./jids.js"

/**
 * What a connection keeps in the gateway's `Cache` besides its own memory: group metadata (so a
 * reconnect, or another process taking the session over, does not fetch every group again
 * before its first sends) and LID → phone answers. Short-lived, and never the only copy: when
 * the cache cannot be reached the connection fetches and looks up as it would without it.
 */

/** Group metadata is kept current by the events while a connection lives; a copy outlives it only briefly. */
export const GROUP_TTL = "2 minutes"
/** A LID's phone number rarely changes, but the mapping store is the authority. */
export const LID_TTL = "10 minutes"

const groupKey = (sessionId: string, jid: string) => `baileys:${sessionId}:group:${jid}`
const lidKey = (sessionId: string, lid: string) => `baileys:${sessionId}:lid:${lid}`

/** The shared copy behind a `GroupCache`: read on a miss, written (in the background) on every change. */
export interface SharedGroups {
  readonly get: (jid: string) => Promise<GroupMetadata | undefined>
  readonly set: (metadata: GroupMetadata) => void
  readonly forget: (jid: string) => void
}

export const sharedGroupsOf = (cache: CacheService, sessionId: string, runtime: Runtime.Runtime<never>): SharedGroups => {
  const background = (effect: Effect.Effect<void, unknown>) => void Runtime.runFork(runtime)(Effect.ignore(effect))
  return {
    get: (jid) =>
      Runtime.runPromise(runtime)(
        cache.get<GroupMetadata>(groupKey(sessionId, jid)).pipe(
          Effect.map(Option.getOrUndefined),
          Effect.orElseSucceed(() => undefined)
        )
      ),
    set: (metadata) => background(cache.set(groupKey(sessionId, metadata.id), metadata, GROUP_TTL)),
    forget: (jid) => background(cache.delete(groupKey(sessionId, jid)))
  }
}

/** LID lookups answered from the cache when it knows them; what `lookup` finds is kept there. */
export const cachedPhoneOfLid = (cache: CacheService, sessionId: string, lookup: PhoneOfLid): PhoneOfLid => (lid) =>
  cache.get<string>(lidKey(sessionId, lid)).pipe(
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.flatMap(Option.match({
      onSome: (phone) => Effect.succeed(Option.some(phone)),
      onNone: () =>
        Effect.tap(lookup(lid), (found) =>
          Option.isSome(found) ? Effect.ignore(cache.set(lidKey(sessionId, lid), found.value, LID_TTL)) : Effect.void)
    }))
  )
