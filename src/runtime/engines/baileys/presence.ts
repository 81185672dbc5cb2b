import type { BaileysEventMap, PresenceData, WASocket } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import type { PresenceState } from "../../../domain/Message.js"
import { EngineEvent } from "../../Engine.js"
import type { PresenceCommand, PresenceOperations } from "../../EngineMessageActions.js"
import { engineErrorOf } from "./disconnect.js"
import { isGroupJid, noPhoneLookup, type PhoneOfLid, personIdOf, toWireJid } from "./jids.js"
import { type Me, refusal } from "./messageActions.js"

/**
 * Presence through Baileys, both ways. The account's own: `available`/`unavailable` for
 * everywhere (a `<presence>` stanza), `composing`/`recording`/`paused` in one chat (a
 * `<chatstate>`). Others': after `presenceSubscribe`, WhatsApp sends the same stanzas, which
 * Baileys reports as `presence.update`.
 */

export type PresenceSocket = Pick<WASocket, "sendPresenceUpdate" | "presenceSubscribe">

const chatStates = { typing: "composing", recording: "recording", paused: "paused" } as const

export const makePresenceOperations = (sock: PresenceSocket, me: Me): PresenceOperations => ({
  set: (command: PresenceCommand) =>
    Effect.gen(function*() {
      if (!("chatId" in command)) {
        // Baileys drops an account-wide presence silently when it does not know the account's
        // push name (WhatsApp requires it): said here instead.
        if (!me()?.name) {
          return yield* refusal("PUSH_NAME_UNKNOWN", "the account's push name is not known yet; WhatsApp requires it to set a presence", "conflict")
        }
        return yield* Effect.tryPromise({
          try: () => sock.sendPresenceUpdate(command.state === "online" ? "available" : "unavailable"),
          catch: (error) => engineErrorOf("PRESENCE", error)
        })
      }
      return yield* Effect.tryPromise({
        try: () => sock.sendPresenceUpdate(chatStates[command.state], toWireJid(command.chatId)),
        catch: (error) => engineErrorOf("PRESENCE", error)
      })
    }),
  subscribe: (chatId) =>
    Effect.tryPromise({ try: () => sock.presenceSubscribe(toWireJid(chatId)), catch: (error) => engineErrorOf("PRESENCE_SUBSCRIBE", error) })
})

/**
 * Baileys' presence → the gateway's. rc14 reports a `<chatstate><paused/>` as `available`; it
 * builds that one as `{ lastKnownPresence }` alone, while a `<presence>` stanza always gives
 * `lastSeen` (if undefined): so an `available` without the field is someone who stopped typing.
 */
export const presenceStateOf = (data: PresenceData): PresenceState => {
  switch (data.lastKnownPresence) {
    case "composing":
      return "typing"
    case "recording":
      return "recording"
    case "paused":
      return "paused"
    case "unavailable":
      return "offline"
    case "available":
      return "lastSeen" in data ? "online" : "paused"
  }
}

/**
 * `presence.update`: the presence of the contacts the account subscribed to. Someone typing in
 * a group comes with the group's id; the gateway keeps presences by contact, so those are left.
 */
export const fromPresence = (update: BaileysEventMap["presence.update"], phoneOfLid: PhoneOfLid = noPhoneLookup) =>
  Effect.gen(function*() {
    if (isGroupJid(update.id)) return []
    const events: Array<EngineEvent> = []
    for (const [participant, data] of Object.entries(update.presences)) {
      const chatId = yield* personIdOf(participant, null, phoneOfLid)
      if (chatId === null) continue
      const lastSeen = typeof data.lastSeen === "number" && data.lastSeen > 0 ? new Date(data.lastSeen * 1000) : null
      events.push(EngineEvent.PresenceUpdated({ presence: { chatId, state: presenceStateOf(data), lastSeen } }))
    }
    return events
  })
