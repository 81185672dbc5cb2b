import { DateTime, Effect } from "effect"
import { ContactRepo } from "./ports/store/ContactRepo.js"
import { GroupRepo } from "./ports/store/GroupRepo.js"
import { LabelRepo } from "./ports/store/LabelRepo.js"
import { Events } from "./Events.js"
import { makeEvent } from "../domain/makeEvent.js"
import type { ContactSeen, GroupChange, LabelChange } from "./EngineDirectory.js"

/**
 * Directory news from an engine (groups, labels, contacts) → the Store's copy, then the
 * `group.*` / `label.update` events of the catalog (src/domain/Events.ts). The Store first, so
 * whatever is announced can be read back.
 */

const groupEventOf = { join: "group.join", leave: "group.leave", update: "group.update", participants: "group.participants" } as const

export const applyGroupChange = (sessionId: string, change: GroupChange) =>
  Effect.gen(function*() {
    const groups = yield* GroupRepo
    const { action, by, group, groupId, kind, participants, update } = change
    if (kind === "leave") yield* groups.remove(sessionId, groupId)
    else if (group !== undefined) yield* groups.upsert(sessionId, group)
    else if (kind === "update" && update !== undefined) yield* groups.update(sessionId, groupId, update)
    else if (kind === "participants" && action !== undefined && participants !== undefined) {
      yield* groups.changeParticipants(sessionId, groupId, participants, action)
    }
    yield* (yield* Events).publish(makeEvent(groupEventOf[kind], sessionId, {
      groupId,
      ...(group === undefined ? {} : { group }),
      ...(update === undefined ? {} : { update }),
      ...(participants === undefined ? {} : { participants }),
      ...(action === undefined ? {} : { action }),
      by: by ?? null
    }, yield* DateTime.nowAsDate))
  })

export const applyLabelChange = (sessionId: string, change: LabelChange) =>
  Effect.gen(function*() {
    const labels = yield* LabelRepo
    if (change.kind === "label") {
      yield* change.deleted ? labels.remove(sessionId, change.label.id) : labels.upsert(sessionId, change.label)
    } else {
      yield* labels.setOnChat(sessionId, change.chatId, change.labelId, change.added)
    }
    yield* (yield* Events).publish(makeEvent("label.update", sessionId, change, yield* DateTime.nowAsDate))
  })

export const recordContacts = (sessionId: string, contacts: ReadonlyArray<ContactSeen>) =>
  Effect.flatMap(ContactRepo, (repo) => Effect.forEach(contacts, (contact) => repo.see(sessionId, contact), { discard: true }))
