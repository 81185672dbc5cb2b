import { Effect, HashMap, Option, Ref } from "effect"
import { STATUS_CHAT_ID } from "../../../domain/Chat.js"
import { phoneOfChatId } from "../../../domain/Ids.js"
import type { EngineError } from "../../Engine.js"
import { refuse } from "./Directory.js"
import type { HeldEvent, SentMessage } from "./Ledger.js"
import { contentRecordOf, type Payload, received } from "./Messaging.js"
import type { Line, Switchboard } from "./Switchboard.js"

/**
 * Status updates on the sandbox network: a post to `status@broadcast` reaches the sessions of
 * its audience (the phones it names) as a message of that chat, held until taken like any
 * message; the sender hears `delivered` once the first of them took it. Runs under the
 * network's lock (the caller takes it).
 */
export const statusOf = (switchboard: Switchboard) => {
  const { handTo, phoneOwners, recordNew } = switchboard

  /** The sessions on this network among the audience's phones; other phones are nobody here. */
  const sessionsOf = (audience: ReadonlyArray<string>) =>
    Effect.map(Ref.get(phoneOwners), (owners) =>
      audience.flatMap((phone) => Option.toArray(HashMap.get(owners, phone))))

  const post = (
    line: Line,
    engineMessageId: string,
    audienceIds: ReadonlyArray<string> | undefined,
    payload: Payload,
    timestamp: Date
  ): Effect.Effect<void, EngineError> =>
    Effect.gen(function*() {
      const audience = (audienceIds ?? []).flatMap((id) => Option.toArray(Option.fromNullable(phoneOfChatId(id))))
      if (audience.length === 0) {
        return yield* refuse("invalid", "STATUS_AUDIENCE_REQUIRED", "a status update needs the phones of the contacts who may see it")
      }
      const sent: SentMessage = {
        senderSessionId: line.sessionId,
        senderPhone: line.me.phone,
        recipientPhone: STATUS_CHAT_ID,
        timestamp,
        status: "pending",
        audience,
        ...contentRecordOf(payload)
      }
      const from = `${line.me.phone}@c.us`
      const update = received({ engineMessageId, chatId: STATUS_CHAT_ID, from, fromLid: line.me.lid }, payload, timestamp)
      // Held for the audience before it is recorded as sent, as in a person chat (see `Messaging.send`).
      yield* Effect.forEach(yield* sessionsOf(audience), (sessionId) => handTo(sessionId, update), { discard: true })
      yield* recordNew(engineMessageId, sent)
    })

  /** What the poster did to a status update (deleted it) reaches whoever could see it. */
  const tellAudience = (line: Line, sent: SentMessage, event: (chatIdThere: string, from: string) => HeldEvent) =>
    Effect.gen(function*() {
      const me = `${line.me.phone}@c.us`
      yield* Effect.forEach(yield* sessionsOf(sent.audience ?? []), (sessionId) => handTo(sessionId, event(STATUS_CHAT_ID, me)), { discard: true })
    })

  return { post, tellAudience }
}

export type SandboxStatus = ReturnType<typeof statusOf>
