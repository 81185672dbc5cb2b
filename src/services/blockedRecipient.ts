import { Effect } from "effect"
import { Conflict } from "../domain/Errors.js"
import type { ContactRepo } from "../runtime/ports/store/ContactRepo.js"

/**
 * 409 `CONTACT_BLOCKED` when the account blocked `chatId`: WhatsApp would not deliver what the
 * account sends there (a message, a reaction, an edit, a vote), so it is refused before anything
 * is stored or sent. `details` says which part of a request named that contact, when it has parts.
 */
export const refuseIfBlocked = (contacts: ContactRepo["Type"], sessionId: string, chatId: string, details?: unknown) =>
  Effect.flatMap(contacts.isBlocked(sessionId, chatId), (blocked) =>
    blocked
      ? Effect.fail(
        new Conflict({
          code: "CONTACT_BLOCKED",
          message: `this account blocked ${chatId}; unblock it to send`,
          ...(details === undefined ? {} : { details })
        })
      )
      : Effect.void)
