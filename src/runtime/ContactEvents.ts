import { DateTime, Effect } from "effect"
import type { ContactChanges } from "../domain/Contact.js"
import { makeEvent } from "../domain/makeEvent.js"
import type { InboundContactChange, InboundJoinRequest } from "./EngineAccount.js"
import { Events } from "./Events.js"
import { ContactRepo } from "./ports/store/ContactRepo.js"
import { Store } from "./ports/store/Store.js"

/**
 * People and join requests heard from the network → the Store's copy, then `contact.update` /
 * `group.request`. Each change and its event are one transaction (the outbox).
 */

/** Only what the change names: a field it leaves out stays as it was. */
const changesOf = ({ about, blocked, picture, pushName }: InboundContactChange): ContactChanges => ({
  ...(pushName === undefined ? {} : { pushName }),
  ...(about === undefined ? {} : { about }),
  ...(picture === undefined ? {} : { picture }),
  ...(blocked === undefined ? {} : { blocked })
})

/** People changed (push name, about, picture, blocked): kept, and announced as `contact.update`. */
export const applyContactChanges = (sessionId: string, changes: ReadonlyArray<InboundContactChange>) =>
  Effect.gen(function*() {
    const contacts = yield* ContactRepo
    const events = yield* Events
    const { transactionally } = yield* Store
    yield* Effect.forEach(changes, (change) =>
      transactionally(Effect.gen(function*() {
        const { chatId, picture, ...fields } = change
        // A changed picture has a new URL, asked for when someone wants it; the old one is stale.
        // A group's picture is news too (WhatsApp tells it the same way), but a group is no contact.
        if (!chatId.endsWith("@g.us")) {
          yield* contacts.updateDetails(sessionId, chatId, { ...fields, ...(picture === undefined ? {} : { pictureUrl: null }) })
        }
        yield* events.publish(makeEvent("contact.update", sessionId, { chatId, changes: changesOf(change) }, yield* DateTime.nowAsDate))
      })), { discard: true })
  })

/** Someone asked to join a group the account administers (or was answered): `group.request`. */
export const applyJoinRequest = (sessionId: string, request: InboundJoinRequest) =>
  Effect.gen(function*() {
    const events = yield* Events
    const { transactionally } = yield* Store
    const { action, by, groupId, participants } = request
    yield* transactionally(events.publish(makeEvent("group.request", sessionId, { groupId, participants, action, by: by ?? null }, yield* DateTime.nowAsDate)))
  })
