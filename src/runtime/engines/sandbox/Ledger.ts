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

/**
 * Events the network holds for a session until its consumer took them: messages and reactions
 * for it, receipts owed to it.
 */
export type HeldEvent = Extract<EngineEvent, { readonly _tag: "MessageReceived" | "ReactionReceived" | "MessageStatusChanged" }>

/** One event held for one session. */
export interface HeldEntry {
  readonly sessionId: string
  /** Identifies the event within the session (see `heldKeyOf`): the same event is held once. */
  readonly key: string
  /** Arrival order across the whole network; events are handed over in this order. */
  readonly seq: number
  readonly event: HeldEvent
}

export interface LedgerContents {
  readonly phoneOwners: ReadonlyArray<readonly [phone: string, sessionId: string]>
  /** Ordered by `seq`. */
  readonly held: ReadonlyArray<HeldEntry>
  readonly sent: ReadonlyArray<readonly [engineMessageId: string, message: SentMessage]>
}

/**
 * The simulated server's memory. A real WhatsApp server keeps a message for a device until the
 * device acknowledged it, and the receipts owed to their senders, whatever happens to the
 * gateway; the sandbox writes the same facts through to a ledger so that a restarted gateway
 * (even after kill -9) finds them. The switchboard keeps its working copy in memory and loads
 * it from here once. Every held event is a row of its own, so holding n events costs n writes.
 */
export class SandboxLedger extends Context.Tag("switchboard/SandboxLedger")<SandboxLedger, {
  readonly load: Effect.Effect<LedgerContents>
  readonly rememberOwner: (phone: string, sessionId: string) => Effect.Effect<void>
  /** Holds one event; an event already held under that key is left as it is. */
  readonly hold: (sessionId: string, key: string, seq: number, event: HeldEvent) => Effect.Effect<void>
  /** The session's consumer took the event: it is no longer held (no-op if it was not). */
  readonly release: (sessionId: string, key: string) => Effect.Effect<void>
  readonly recordSent: (engineMessageId: string, message: SentMessage) => Effect.Effect<void>
  /** Drops the session's held events, its phone ownership and the messages it sent, at once. */
  readonly forgetSession: (sessionId: string) => Effect.Effect<void>
}>() {
  /** A network that lives and dies with the process: nothing outlives it. */
  static readonly none = Layer.succeed(SandboxLedger, {
    load: Effect.succeed({ phoneOwners: [], held: [], sent: [] }),
    rememberOwner: () => Effect.void,
    hold: () => Effect.void,
    release: () => Effect.void,
    recordSent: () => Effect.void,
    forgetSession: () => Effect.void
  })
}

/**
 * A message is held once per recipient; a receipt once per status it reports (a resend may
 * hold the same receipt again after it was taken, which is what the sender should hear).
 */
export const heldKeyOf = (event: HeldEvent): string => {
  switch (event._tag) {
    case "MessageReceived":
      return `msg:${event.message.engineMessageId}`
    case "ReactionReceived": {
      const { emoji, from, targetEngineMessageId, timestamp } = event.reaction
      return `reaction:${targetEngineMessageId}:${from}:${timestamp.getTime()}:${emoji}`
    }
    case "MessageStatusChanged":
      return `status:${event.engineMessageId}:${event.status}`
  }
}

/** JSON forms for a durable ledger (dates as ISO strings). */
export const encodeHeld = (event: HeldEvent): string => JSON.stringify(event)

export const decodeHeld = (json: string): HeldEvent => {
  const event = JSON.parse(json) as HeldEvent
  switch (event._tag) {
    case "MessageReceived":
      return EngineEvent.MessageReceived({ message: { ...event.message, timestamp: new Date(event.message.timestamp) } })
    case "ReactionReceived":
      return EngineEvent.ReactionReceived({ reaction: { ...event.reaction, timestamp: new Date(event.reaction.timestamp) } })
    case "MessageStatusChanged":
      return EngineEvent.MessageStatusChanged({
        engineMessageId: event.engineMessageId,
        status: event.status,
        ...(event.error === undefined ? {} : { error: event.error })
      })
  }
}

export const encodeSent = (message: SentMessage): string => JSON.stringify(message)

export const decodeSent = (json: string): SentMessage => {
  const parsed = JSON.parse(json) as Omit<SentMessage, "timestamp"> & { readonly timestamp: string }
  return { ...parsed, timestamp: new Date(parsed.timestamp) }
}
