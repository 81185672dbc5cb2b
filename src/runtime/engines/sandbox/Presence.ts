import { Clock, Effect, HashMap, HashSet, Option, Ref } from "effect"
import { phoneOfChatId } from "../../../domain/Ids.js"
import { EngineEvent } from "../../Engine.js"
import type { InboundPresence, PresenceCommand, PresenceOperations } from "../../EngineMessageActions.js"
import { refuse } from "./Directory.js"
import { isEchoPhone, sandboxPhoneOf } from "./identity.js"
import { personPhone } from "./Messaging.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Presence on the sandbox network. A session is online while it is connected and Ready, unless
 * it said `offline`; its last seen is when it said so or when its connection went away. Typing,
 * recording and paused go to the other person of a chat; online and offline to every session
 * that subscribed to the account. Echo contacts are always online. Like WhatsApp's, presence is
 * news only while it is current: it is offered to Ready sessions and held for nobody, and the
 * network keeps it (and the subscriptions) in memory only, as a restarted server forgets who
 * watches whom until they subscribe again. Runs under the network's lock.
 */

type Availability = Pick<InboundPresence, "state" | "lastSeen">

export const makePresence = (switchboard: Switchboard) =>
  Effect.gen(function*() {
    const { emitIfLive, liveLine, offerIfReady, phoneOwners, requireReady, serialized } = switchboard
    /** What each session said last: `online` or `offline`. */
    const declared = yield* Ref.make(HashMap.empty<string, "online" | "offline">())
    /** By phone. */
    const lastSeen = yield* Ref.make(HashMap.empty<string, Date>())
    /** Watched phone → the sessions that subscribed to it. */
    const subscribers = yield* Ref.make(HashMap.empty<string, HashSet.HashSet<string>>())
    /** By phone: the state subscribers heard last, so a reconnect that changes nothing tells nobody. */
    const announced = yield* Ref.make(HashMap.empty<string, InboundPresence["state"]>())

    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

    const availabilityOf = (phone: string): Effect.Effect<Availability> =>
      Effect.gen(function*() {
        if (isEchoPhone(phone)) return { state: "online", lastSeen: null }
        const owner = HashMap.get(yield* Ref.get(phoneOwners), phone)
        const live = Option.isSome(owner) ? yield* liveLine(owner.value) : Option.none()
        const saidOffline = Option.isSome(owner) && Option.contains(HashMap.get(yield* Ref.get(declared), owner.value), "offline")
        if (Option.isSome(live) && live.value.ready && !saidOffline) return { state: "online", lastSeen: null }
        return { state: "offline", lastSeen: Option.getOrNull(HashMap.get(yield* Ref.get(lastSeen), phone)) }
      })

    const announce = (phone: string, availability: Availability) =>
      Effect.gen(function*() {
        yield* Ref.update(announced, HashMap.set(phone, availability.state))
        const watchers = Option.getOrElse(HashMap.get(yield* Ref.get(subscribers), phone), () => HashSet.empty<string>())
        const event = EngineEvent.PresenceUpdated({ presence: { chatId: `${phone}@c.us`, ...availability } })
        yield* Effect.forEach(watchers, (sessionId) => offerIfReady(sessionId, event), { discard: true })
      })

    /** The session's connection came or went: its subscribers hear if that changed its presence. */
    const connectionChanged = (sessionId: string) =>
      Effect.gen(function*() {
        const phone = sandboxPhoneOf(sessionId)
        const availability = yield* availabilityOf(phone)
        const before = HashMap.get(yield* Ref.get(announced), phone)
        if (Option.contains(before, availability.state)) return
        if (availability.state === "offline" && Option.contains(before, "online")) {
          const at = yield* now
          yield* Ref.update(lastSeen, HashMap.set(phone, at))
          return yield* announce(phone, { state: "offline", lastSeen: at })
        }
        yield* announce(phone, availability)
      })

    const set = (line: Line, command: PresenceCommand) =>
      Effect.gen(function*() {
        const me = `${line.me.phone}@c.us`
        if ("chatId" in command) {
          // Typing in a group or a channel is not simulated: the presence event names no participant.
          if (command.chatId.endsWith("@g.us") || command.chatId.endsWith("@newsletter")) return
          const owner = HashMap.get(yield* Ref.get(phoneOwners), yield* personPhone(command.chatId))
          if (Option.isNone(owner)) return
          return yield* offerIfReady(owner.value, EngineEvent.PresenceUpdated({ presence: { chatId: me, state: command.state, lastSeen: null } }))
        }
        yield* Ref.update(declared, HashMap.set(line.sessionId, command.state))
        if (command.state === "online") return yield* announce(line.me.phone, { state: "online", lastSeen: null })
        const at = yield* now
        yield* Ref.update(lastSeen, HashMap.set(line.me.phone, at))
        yield* announce(line.me.phone, { state: "offline", lastSeen: at })
      })

    /** Records the subscription and tells the subscriber at once where the contact stands. */
    const subscribe = (line: Line, chatId: string) =>
      Effect.gen(function*() {
        const phone = phoneOfChatId(chatId)
        if (phone === null) return yield* refuse("invalid", "NOT_A_PERSON", `presence is a person's, not ${chatId}'s`)
        yield* Ref.update(subscribers, (all) =>
          HashMap.set(all, phone, HashSet.add(Option.getOrElse(HashMap.get(all, phone), () => HashSet.empty<string>()), line.sessionId))
        )
        const availability = yield* availabilityOf(phone)
        yield* emitIfLive(line, EngineEvent.PresenceUpdated({ presence: { chatId: `${phone}@c.us`, ...availability } }))
      })

    /** A deleted session watches nobody and has said nothing. */
    const forget = (sessionId: string) =>
      Effect.zipRight(
        Ref.update(declared, HashMap.remove(sessionId)),
        Ref.update(subscribers, HashMap.map(HashSet.remove(sessionId)))
      )

    const operations = (line: Line): PresenceOperations => {
      const run = <A, E>(effect: Effect.Effect<A, E>) => serialized(Effect.zipRight(requireReady(line), effect))
      return {
        set: (command) => run(set(line, command)),
        subscribe: (chatId) => run(subscribe(line, chatId))
      }
    }

    return { operations, connectionChanged, forget }
  })
