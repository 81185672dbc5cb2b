import type { StoreUnavailable } from "../domain/Errors.js"
import { Context, Effect, Layer, type Option } from "effect"
import { ContactRepo } from "../runtime/ports/store/ContactRepo.js"
import { engineCall } from "../runtime/EngineCall.js"
import type { ContactCheck, Contact } from "../domain/Contact.js"
import type { EngineCallError, EngineTimeout, NotFound } from "../domain/Errors.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { makeSessionCalls } from "./SessionCalls.js"

export interface ContactsService {
  /** Whether a number is on WhatsApp, with its ids; one that is becomes a known contact. */
  readonly check: (sessionId: string, phone: string) => Effect.Effect<ContactCheck, EngineCallError | EngineTimeout | StoreUnavailable>
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Contact>, NotFound | StoreUnavailable>
}

export class Contacts extends Context.Tag("switchboard/Contacts")<Contacts, ContactsService>() {
  static readonly layer = Layer.effect(Contacts, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const repo = yield* ContactRepo
  const { call, exists } = yield* makeSessionCalls

  const service: ContactsService = {
    check: Effect.fn("Contacts.check")(function*(sessionId, phone) {
      const [result] = yield* call(sessionId, engineCall("ContactsCheck", { phones: [phone] }))
      const checked = result ?? { number: phone, exists: false, chatId: null, lid: null }
      if (checked.exists) yield* repo.see(sessionId, { phone: checked.chatId, lid: checked.lid, name: null })
      return checked
    }),
    list: Effect.fn("Contacts.list")((sessionId, page) => Effect.zipRight(exists(sessionId), repo.list(sessionId, page)))
  }
  return service
})
