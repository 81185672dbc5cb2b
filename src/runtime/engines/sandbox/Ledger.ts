import { Context, Effect, Layer } from "effect"
import type { MessageStatus } from "../../../services/Message.js"
import { EngineEvent } from "../../Engine.js"

/** What the network remembers of a message a sandbox session sent, to route its receipts. */
export interface SentMessage {
  readonly senderSessionId: string
  readonly senderPhone: string
  readonly recipientPhone: string
  readonly timestamp: Date
  readonly status: MessageStatus
}

/** Events the network holds for a session that is away: messages for it, receipts owed to it. */
export type HeldEvent = Extract<EngineEvent, { readonly _tag: "MessageReceived" | "MessageStatusChanged" }>

export interface LedgerContents {
  readonly phoneOwners: ReadonlyArray<readonly [phone: string, sessionId: string]>
  readonly held: ReadonlyArray<readonly [sessionId: string, events: ReadonlyArray<HeldEvent>]>
  readonly sent: ReadonlyArray<readonly [engineMessageId: string, message: SentMessage]>
}

/**
 * The simulated server's memory. A real WhatsApp server keeps messages for a phone that is
 * off, and the receipts owed to their senders, whatever happens to the gateway; the sandbox
 * writes the same facts through to a ledger so that a restarted gateway (even after kill -9)
 * finds them. The switchboard keeps its working copy in memory and loads it from here once.
 */
export class SandboxLedger extends Context.Tag("switchboard/SandboxLedger")<SandboxLedger, {
  readonly load: Effect.Effect<LedgerContents>
  readonly rememberOwner: (phone: string, sessionId: string) => Effect.Effect<void>
  /** Replaces what is held for the session (the whole list, in arrival order; empty = nothing). */
  readonly hold: (sessionId: string, events: ReadonlyArray<HeldEvent>) => Effect.Effect<void>
  readonly recordSent: (engineMessageId: string, message: SentMessage) => Effect.Effect<void>
}>() {
  /** A network that lives and dies with the process: nothing outlives it. */
  static readonly none = Layer.succeed(SandboxLedger, {
    load: Effect.succeed({ phoneOwners: [], held: [], sent: [] }),
    rememberOwner: () => Effect.void,
    hold: () => Effect.void,
    recordSent: () => Effect.void
  })
}

/** JSON forms for a durable ledger (dates as ISO strings). */
export const encodeHeld = (events: ReadonlyArray<HeldEvent>): string => JSON.stringify(events)

export const decodeHeld = (json: string): ReadonlyArray<HeldEvent> =>
  (JSON.parse(json) as ReadonlyArray<HeldEvent>).map((event) =>
    event._tag === "MessageReceived"
      ? EngineEvent.MessageReceived({ message: { ...event.message, timestamp: new Date(event.message.timestamp) } })
      : EngineEvent.MessageStatusChanged({
        engineMessageId: event.engineMessageId,
        status: event.status,
        ...(event.error === undefined ? {} : { error: event.error })
      })
  )

export const encodeSent = (message: SentMessage): string => JSON.stringify(message)

export const decodeSent = (json: string): SentMessage => {
  const parsed = JSON.parse(json) as Omit<SentMessage, "timestamp"> & { readonly timestamp: string }
  return { ...parsed, timestamp: new Date(parsed.timestamp) }
}
