import { Effect, HashMap, Option, Ref } from "effect"
import type { ContactCheck } from "../../../domain/Contact.js"
import type { GroupParticipant, MemberAddMode } from "../../../domain/Group.js"
import { phoneOfChatId } from "../../../domain/Ids.js"
import type { Label } from "../../../domain/Label.js"
import { EngineError, type EngineRefusal } from "../../Engine.js"
import type { ContactOperations } from "../../EngineDirectory.js"
import { isEchoPhone, sandboxMeOf } from "./identity.js"
import type { DirectoryKind, DirectoryRecord, HeldEvent, LedgerOperations } from "./Ledger.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * The network's directory: its groups and channels, and per session its labels and whether it
 * is a business account. Like the switchboard it keeps a working copy in memory, writes every
 * change through to the ledger (one whole record per thing), and is only touched under the
 * network's lock. Groups, channels and labels build their operations on it.
 */

export interface GroupRecord {
  readonly id: string
  readonly subject: string
  readonly description: string | null
  /** The creator's `…@c.us`. */
  readonly owner: string
  readonly createdAt: string
  readonly announce: boolean
  readonly restrict: boolean
  /** Absent in records kept before these settings existed: admins, no approval. */
  readonly memberAddMode?: MemberAddMode | undefined
  readonly approval?: boolean | undefined
  /** `…@c.us` ids, in the order they joined (the oldest first). */
  readonly participants: ReadonlyArray<GroupParticipant>
  readonly inviteCode: string
  /** The group's picture (see `Pictures.ts`); absent or null: none. */
  readonly pictureUrl?: string | null | undefined
  /** Who asked to join by link while approval was on, the oldest first. */
  readonly requests?: ReadonlyArray<{ readonly id: string; readonly requestedAt: string }> | undefined
}

/** A session's own profile; a `name` of null is the sandbox's default push name. */
export interface ProfileRecord {
  readonly name: string | null
  readonly about: string | null
  readonly pictureUrl: string | null
}

export interface ChannelPost {
  readonly id: string
  readonly type: string
  readonly text: string | null
  readonly timestamp: string
}

export interface ChannelRecord {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly ownerPhone: string
  readonly inviteCode: string
  readonly createdAt: string
  readonly subscriberPhones: ReadonlyArray<string>
  /** Newest first, at most `maxChannelPosts`. */
  readonly posts: ReadonlyArray<ChannelPost>
}

/** A business account's labels and which chats carry them. */
export interface LabelBook {
  readonly labels: ReadonlyArray<Label>
  readonly chats: ReadonlyArray<{ readonly chatId: string; readonly labelId: string }>
  /** Labels ever created: the next id is `created + 1`, the next colour `created % 20`. */
  readonly created: number
}

export const emptyLabelBook: LabelBook = { labels: [], chats: [], created: 0 }

export const refuse = (refusal: EngineRefusal, code: string, message: string) =>
  new EngineError({ code, message: `sandbox: ${message}`, transient: false, refusal })

/** A session's own id in groups and on the wire. */
export const personIdOf = (line: Line) => `${line.me.phone}@c.us`

export type Directory = Effect.Effect.Success<ReturnType<typeof makeDirectory>>

export const makeDirectory = (
  switchboard: Switchboard,
  ledger: LedgerOperations<never>,
  records: ReadonlyArray<DirectoryRecord>,
  businessByDefault: boolean
) =>
  Effect.gen(function*() {
    const { handTo, phoneOwners, requireReady, serialized } = switchboard
    const loaded = <A>(kind: DirectoryKind) =>
      HashMap.fromIterable(records.filter((record) => record.kind === kind).map(({ id, json }) => [id, JSON.parse(json) as A] as const))
    const groups = yield* Ref.make(loaded<GroupRecord>("group"))
    const channels = yield* Ref.make(loaded<ChannelRecord>("channel"))
    const labelBooks = yield* Ref.make(loaded<LabelBook>("labels"))
    const business = yield* Ref.make(loaded<boolean>("business"))
    const profiles = yield* Ref.make(loaded<ProfileRecord>("profile"))
    /** Per session, the `…@c.us` ids it blocked. */
    const blocklists = yield* Ref.make(loaded<ReadonlyArray<string>>("blocklist"))

    /** Sets (or with `null` deletes) one record, in memory and in the ledger. */
    const writer = <A>(ref: Ref.Ref<HashMap.HashMap<string, A>>, kind: DirectoryKind) => (id: string, value: A | null) =>
      Ref.update(ref, (all) => value === null ? HashMap.remove(all, id) : HashMap.set(all, id, value)).pipe(
        Effect.zipRight(ledger.putRecord(kind, id, value === null ? null : JSON.stringify(value)))
      )

    const lookup = <A>(ref: Ref.Ref<HashMap.HashMap<string, A>>, id: string) => Effect.map(Ref.get(ref), HashMap.get(id))

    /** Directory work on a session's behalf: under the network's lock, and only while its line is Ready. */
    const onBehalfOf = (line: Line) => <A>(effect: Effect.Effect<A, EngineError>): Effect.Effect<A, EngineError> =>
      serialized(Effect.zipRight(requireReady(line), effect))

    /**
     * Someone who exists on this network, as `…@c.us`: a phone a session owns or an echo phone,
     * or the lid of a session (resolved to its phone). Anybody else is nobody.
     */
    const personOf = (id: string): Effect.Effect<Option.Option<string>> =>
      Effect.map(Ref.get(phoneOwners), (owners) => {
        const phone = phoneOfChatId(id)
        if (phone !== null) return HashMap.has(owners, phone) || isEchoPhone(phone) ? Option.some(id) : Option.none()
        return Option.fromNullable(Array.from(owners).find(([, sessionId]) => sandboxMeOf(sessionId).lid === id)).pipe(
          Option.map(([ownedPhone]) => `${ownedPhone}@c.us`)
        )
      })

    /** The sessions of those people (`…@c.us`) that have one: echo phones and strangers have none. */
    const sessionsOf = (personIds: ReadonlyArray<string>) =>
      Effect.map(Ref.get(phoneOwners), (owners) =>
        personIds.flatMap((id) => {
          const phone = phoneOfChatId(id)
          const sessionId = phone === null ? Option.none() : HashMap.get(owners, phone)
          return phone !== null && Option.isSome(sessionId) ? [{ phone, sessionId: sessionId.value }] : []
        })
      )

    /** Hands the event to the session of each of those people that has one. */
    const tell = (personIds: ReadonlyArray<string>, event: HeldEvent) =>
      sessionsOf(personIds).pipe(Effect.flatMap((sessions) =>
        Effect.forEach(sessions, ({ sessionId }) => handTo(sessionId, event), { discard: true })
      ))

    const isBusiness = (sessionId: string) =>
      Effect.map(lookup(business, sessionId), Option.getOrElse(() => businessByDefault))

    const contacts = (line: Line): ContactOperations => ({
      check: (phones) =>
        onBehalfOf(line)(Effect.map(Ref.get(phoneOwners), (owners) =>
          phones.map((number): ContactCheck => {
            const phone = number.replace(/^\+/, "")
            const owner = HashMap.get(owners, phone)
            if (Option.isSome(owner)) return { number, exists: true, chatId: `${phone}@c.us`, lid: sandboxMeOf(owner.value).lid }
            if (/^\d+$/.test(phone) && isEchoPhone(phone)) return { number, exists: true, chatId: `${phone}@c.us`, lid: null }
            return { number, exists: false, chatId: null, lid: null }
          })
        ))
    })

    return {
      groups,
      channels,
      labelBooks,
      putGroup: writer(groups, "group"),
      putChannel: writer(channels, "channel"),
      putLabels: writer(labelBooks, "labels"),
      profiles,
      blocklists,
      putProfile: writer(profiles, "profile"),
      putBlocklist: writer(blocklists, "blocklist"),
      setBusiness: (sessionId: string, value: boolean) => serialized(writer(business, "business")(sessionId, value)),
      isBusiness,
      lookup,
      onBehalfOf,
      sessionsOf,
      personOf,
      tell,
      contacts,
      /**
       * A deleted session's labels, business flag, profile and blocklist go with it. Its phone stays
       * in the groups and channels it was in (the account still exists; only this device was unlinked).
       */
      forget: (sessionId: string) =>
        Effect.all([
          writer(labelBooks, "labels")(sessionId, null),
          writer(business, "business")(sessionId, null),
          writer(profiles, "profile")(sessionId, null),
          writer(blocklists, "blocklist")(sessionId, null)
        ], { discard: true })
    }
  })
