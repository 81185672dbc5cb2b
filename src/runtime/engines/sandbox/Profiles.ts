import { Effect, HashMap, Option, Ref } from "effect"
import { phoneOfChatId } from "../../../domain/Ids.js"
import type { Me } from "../../../domain/Session.js"
import { EngineEvent } from "../../Engine.js"
import type { AccountContactOperations, InboundContactChange, ProfileOperations } from "../../EngineAccount.js"
import { type Directory, personIdOf, type ProfileRecord, refuse } from "./Directory.js"
import { sandboxMeOf } from "./identity.js"
import type { Pictures } from "./Pictures.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Profiles, blocklists and ids on the sandbox network. Each session's identity has a name (the
 * sandbox default until it sets one), an about text and a picture that every other session may
 * look up; a change to them reaches, as `ContactsChanged`, the sessions that know the identity
 * (they exchanged a message, or share a group). A session's blocklist stops the messages of
 * those it blocked (see `Messaging.ts`). Echo contacts have a fixed name and nothing else.
 * Runs under the network's lock.
 */

const noProfile: ProfileRecord = { name: null, about: null, pictureUrl: null }

const notOnNetwork = (chatId: string) => refuse("not_found", "NOT_ON_WHATSAPP", `nobody on this network is ${chatId}`)

export const profilesOf = (switchboard: Switchboard, directory: Directory, pictures: Pictures) => {
  const { lookup, personOf, sessionsOf } = directory

  const profileOf = (sessionId: string) => Effect.map(lookup(directory.profiles, sessionId), Option.getOrElse(() => noProfile))
  const nameOf = (sessionId: string, profile: ProfileRecord) => profile.name ?? sandboxMeOf(sessionId).pushName

  /** The session's identity as it shows itself when it connects: with the name it chose. */
  const meOf = (sessionId: string): Effect.Effect<Me> =>
    Effect.map(profileOf(sessionId), (profile) => {
      const me = sandboxMeOf(sessionId)
      return { ...me, pushName: profile.name ?? me.pushName }
    })

  /** The session of a person (`…@c.us`), if one has their phone. */
  const ownerOf = (personId: string) => Effect.map(sessionsOf([personId]), (found) => Option.fromNullable(found[0]?.sessionId))

  /** Whom news of a person reaches: everyone they exchanged a message with or share a group with. */
  const acquaintancesOf = (personId: string) =>
    Effect.gen(function*() {
      const phone = phoneOfChatId(personId)
      const people = new Set<string>()
      for (const message of HashMap.values(yield* Ref.get(switchboard.sentMessages))) {
        if (message.senderPhone === phone && /^\d+$/.test(message.recipientPhone)) people.add(`${message.recipientPhone}@c.us`)
        if (message.recipientPhone === phone) people.add(`${message.senderPhone}@c.us`)
      }
      for (const group of HashMap.values(yield* Ref.get(directory.groups))) {
        if (group.participants.some((participant) => participant.id === personId)) {
          group.participants.forEach((participant) => people.add(participant.id))
        }
      }
      people.delete(personId)
      return [...people]
    })

  const announce = (line: Line, change: Omit<InboundContactChange, "chatId">) =>
    Effect.flatMap(acquaintancesOf(personIdOf(line)), (people) =>
      directory.tell(people, EngineEvent.ContactsChanged({ changes: [{ chatId: personIdOf(line), ...change }] })))

  const updateProfile = (line: Line, patch: Partial<ProfileRecord>) =>
    Effect.flatMap(profileOf(line.sessionId), (profile) => directory.putProfile(line.sessionId, { ...profile, ...patch }))

  const setPicture = (line: Line, jpeg: Uint8Array | null) =>
    Effect.gen(function*() {
      const before = (yield* profileOf(line.sessionId)).pictureUrl
      const url = jpeg === null ? null : yield* pictures.upload(personIdOf(line), jpeg)
      yield* updateProfile(line, { pictureUrl: url })
      yield* pictures.remove(before)
      yield* announce(line, { picture: jpeg === null ? "removed" : "changed" })
    })

  /** A person who exists here, as `…@c.us`, with their session if they have one. */
  const existing = (chatId: string) =>
    Effect.gen(function*() {
      const person = yield* personOf(chatId)
      if (Option.isNone(person)) return yield* notOnNetwork(chatId)
      return { personId: person.value, owner: yield* ownerOf(person.value) }
    })

  const blocklistOf = (sessionId: string) => Effect.map(lookup(directory.blocklists, sessionId), Option.getOrElse((): ReadonlyArray<string> => []))

  const setBlocked = (line: Line, chatId: string, blocked: boolean) =>
    Effect.gen(function*() {
      const { personId } = yield* existing(chatId)
      const others = (yield* blocklistOf(line.sessionId)).filter((id) => id !== personId)
      yield* directory.putBlocklist(line.sessionId, blocked ? [...others, personId] : others)
    })

  const contactProfile = (chatId: string) =>
    Effect.gen(function*() {
      const { owner, personId } = yield* existing(chatId)
      if (Option.isNone(owner)) return { pushName: `Echo ${personId.slice(-9, -5)}`, about: null, isBusiness: false }
      const profile = yield* profileOf(owner.value)
      return { pushName: nameOf(owner.value, profile), about: profile.about, isBusiness: yield* directory.isBusiness(owner.value) }
    })

  const pictureUrl = (chatId: string) =>
    Effect.gen(function*() {
      if (chatId.endsWith("@g.us")) return Option.getOrNull(yield* lookup(directory.groups, chatId))?.pictureUrl ?? null
      const { owner } = yield* existing(chatId)
      return Option.isNone(owner) ? null : (yield* profileOf(owner.value)).pictureUrl
    })

  const resolveIds = (chatId: string) =>
    Effect.map(existing(chatId), ({ owner, personId }) => ({
      phone: personId,
      lid: Option.match(owner, { onNone: () => null, onSome: (sessionId) => sandboxMeOf(sessionId).lid })
    }))

  const operations = (line: Line): { readonly profile: ProfileOperations; readonly contacts: AccountContactOperations } => {
    const run = directory.onBehalfOf(line)
    return {
      profile: {
        get: run(Effect.map(profileOf(line.sessionId), (profile) => ({
          name: nameOf(line.sessionId, profile),
          about: profile.about,
          pictureUrl: profile.pictureUrl
        }))),
        setName: (name) => run(Effect.zipRight(updateProfile(line, { name }), announce(line, { pushName: name }))),
        setAbout: (about) => run(Effect.zipRight(updateProfile(line, { about }), announce(line, { about }))),
        setPicture: (jpeg) => run(setPicture(line, jpeg))
      },
      contacts: {
        profile: (chatId) => run(contactProfile(chatId)),
        pictureUrl: (chatId) => run(pictureUrl(chatId)),
        downloadPicture: pictures.download,
        setBlocked: (chatId, blocked) => run(setBlocked(line, chatId, blocked)),
        blocklist: run(blocklistOf(line.sessionId)),
        resolveIds: (chatId) => run(resolveIds(chatId))
      }
    }
  }

  /** Whether the session blocked that person (`…@c.us`): their messages do not reach it. */
  const blocks = (sessionId: string, personId: string) => Effect.map(blocklistOf(sessionId), (list) => list.includes(personId))

  return { operations, meOf, blocks }
}
