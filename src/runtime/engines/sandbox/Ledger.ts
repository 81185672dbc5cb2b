import { createHash } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import type { MessageStatus } from "../../../domain/Message.js"
import { EngineEvent, type InboundMessage } from "../../Engine.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import { untilStoreIsBack } from "../../storeOutage.js"

/** What the network remembers of a message a sandbox session sent, to route its receipts. */
export interface SentMessage {
  readonly senderSessionId: string
  readonly senderPhone: string
  /** The recipient's phone; for a group or channel message, its chat id (`…@g.us`, `…@newsletter`). */
  readonly recipientPhone: string
  readonly timestamp: Date
  readonly status: MessageStatus
  /**
   * A group or channel message: the member phones whose receipt the sender still waits for, per
   * status. The sender hears `delivered` (`read`) once its list runs empty; a channel post waits
   * for nobody and stays at `sent`. Absent for a person chat (one recipient, one receipt).
   */
  readonly awaiting?: { readonly delivered: ReadonlyArray<string>; readonly read: ReadonlyArray<string> } | undefined
  /** What it was, to tell an editable text or caption from the rest (absent in records of older versions). */
  readonly type?: InboundMessage["type"] | undefined
  /** A poll's options, which votes on it must name. */
  readonly poll?: { readonly options: ReadonlyArray<string>; readonly selectableCount: number } | undefined
  /** Deleted for everyone by its sender: it can be edited no more. */
  readonly revoked?: boolean | undefined
  /** A status update (`recipientPhone` is `status@broadcast`): the phones that may see it. */
  readonly audience?: ReadonlyArray<string> | undefined
}

/**
 * Events the network holds for a session until its consumer took them: messages for it and what
 * others did to messages of its chats (reactions, edits, revokes, pins, poll votes), receipts
 * owed to it, changes to its groups and labels, to people it knows, and join requests to groups
 * it administers. Presence is not held: like WhatsApp's, it
 * is news only while it is current.
 */
export const heldTags = [
  "MessageReceived",
  "ReactionReceived",
  "MessageEdited",
  "MessageRevoked",
  "MessagePinned",
  "PollVoteReceived",
  "MessageStatusChanged",
  "GroupChanged",
  "LabelChanged",
  "ContactsChanged",
  "JoinRequestsChanged"
] as const

export type HeldEvent = Extract<EngineEvent, { readonly _tag: typeof heldTags[number] }>

export const isHeldEvent = (event: EngineEvent): event is HeldEvent => (heldTags as ReadonlyArray<string>).includes(event._tag)

/**
 * The network's directory, one JSON record per thing: a `group` or a `channel` by its id; by
 * session id, a session's `labels` (its labels and chat associations), its `business` flag, its
 * `profile` (name, about, picture) and its `blocklist`.
 */
export type DirectoryKind = "group" | "channel" | "labels" | "business" | "profile" | "blocklist"

export interface DirectoryRecord {
  readonly kind: DirectoryKind
  readonly id: string
  readonly json: string
}

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
  readonly directory: ReadonlyArray<DirectoryRecord>
}

/**
 * The simulated server's memory. A real WhatsApp server keeps a message for a device until the
 * device acknowledged it, and the receipts owed to their senders, whatever happens to the
 * gateway; the sandbox writes the same facts through to a ledger so that a restarted gateway
 * (even after kill -9) finds them. The switchboard keeps its working copy in memory and loads
 * it from here once. Every held event is a row of its own, so holding n events costs n writes.
 * Its operations fail with `E`: `StoreUnavailable` from the Store, nothing once retried.
 */
export interface LedgerOperations<E> {
  readonly load: Effect.Effect<LedgerContents, E>
  readonly rememberOwner: (phone: string, sessionId: string) => Effect.Effect<void, E>
  /** Holds one event; an event already held under that key is left as it is. */
  readonly hold: (sessionId: string, key: string, seq: number, event: HeldEvent) => Effect.Effect<void, E>
  /** The session's consumer took the event: it is no longer held (no-op if it was not). */
  readonly release: (sessionId: string, key: string) => Effect.Effect<void, E>
  /** Writes these records whole (each id at most once), in one go. */
  readonly recordSent: (records: ReadonlyArray<readonly [engineMessageId: string, message: SentMessage]>) => Effect.Effect<void, E>
  /** Drops the session's held events, its phone ownership and the messages it sent, at once. */
  readonly forgetSession: (sessionId: string) => Effect.Effect<void, E>
  /** Writes one directory record whole; `null` deletes it. */
  readonly putRecord: (kind: DirectoryKind, id: string, json: string | null) => Effect.Effect<void, E>
}

export class SandboxLedger extends Context.Tag("switchboard/SandboxLedger")<SandboxLedger, LedgerOperations<StoreUnavailable>>() {
  /** A network that lives and dies with the process: nothing outlives it. */
  static readonly none = Layer.succeed(SandboxLedger, {
    load: Effect.succeed({ phoneOwners: [], held: [], sent: [], directory: [] }),
    rememberOwner: () => Effect.void,
    hold: () => Effect.void,
    release: () => Effect.void,
    recordSent: () => Effect.void,
    forgetSession: () => Effect.void,
    putRecord: () => Effect.void
  })
}

/**
 * The ledger as the simulated server uses it: a write waits until the Store is back, as a real
 * server's memory never fails. Whatever waits on it (the network's lock) waits meanwhile; the
 * waiting itself can be interrupted, even inside a step that otherwise cannot (so a shutdown
 * during an outage is not held up).
 */
export const untilLedgerIsBack = (ledger: LedgerOperations<StoreUnavailable>): LedgerOperations<never> => {
  const reliably = <A>(write: Effect.Effect<A, StoreUnavailable>) =>
    Effect.catchTag(write, "StoreUnavailable", () => Effect.interruptible(untilStoreIsBack(write, "the sandbox network's ledger")))
  return {
    load: reliably(ledger.load),
    rememberOwner: (phone, sessionId) => reliably(ledger.rememberOwner(phone, sessionId)),
    hold: (sessionId, key, seq, event) => reliably(ledger.hold(sessionId, key, seq, event)),
    release: (sessionId, key) => reliably(ledger.release(sessionId, key)),
    recordSent: (records) => reliably(ledger.recordSent(records)),
    forgetSession: (sessionId) => reliably(ledger.forgetSession(sessionId)),
    putRecord: (kind, id, json) => reliably(ledger.putRecord(kind, id, json))
  }
}

/**
 * A message is held once per recipient; a receipt once per status it reports (a resend may
 * hold the same receipt again after it was taken, which is what the sender should hear), a
 * revoke once per message. Those keys come from the content, so the same event is held once.
 * Reactions, edits, pins and votes can change back and forth, so their keys also carry the
 * moment and what was set: each change arrives, the same one only once. A group, label or contact change, or a join request,
 * is keyed by its arrival `seq` instead: two changes may look alike (a subject set back to what
 * it was, a label put on a chat again), and each must reach the session.
 */
export const heldKeyOf = (event: HeldEvent, seq: number): string => {
  switch (event._tag) {
    case "GroupChanged":
      return `group:${event.change.groupId}:${event.change.kind}:${seq}`
    case "LabelChanged":
      return `label:${event.change.kind}:${seq}`
    case "ContactsChanged":
      return `contacts:${seq}`
    case "JoinRequestsChanged":
      return `join-request:${event.request.groupId}:${seq}`
    case "MessageReceived":
      return `msg:${event.message.engineMessageId}`
    case "ReactionReceived": {
      const { emoji, from, targetEngineMessageId, timestamp } = event.reaction
      return `reaction:${targetEngineMessageId}:${from}:${timestamp.getTime()}:${emoji}`
    }
    case "MessageEdited": {
      const { from, targetEngineMessageId, text, timestamp } = event.edit
      return `edit:${targetEngineMessageId}:${from}:${timestamp.getTime()}:${digestOf(text)}`
    }
    case "MessageRevoked":
      return `revoke:${event.revoke.targetEngineMessageId}:${event.revoke.from}`
    case "MessagePinned": {
      const { from, pinned, targetEngineMessageId, timestamp } = event.pin
      return `pin:${targetEngineMessageId}:${from}:${timestamp.getTime()}:${pinned}`
    }
    case "PollVoteReceived": {
      const { options, targetEngineMessageId, timestamp, voter } = event.vote
      return `vote:${targetEngineMessageId}:${voter}:${timestamp.getTime()}:${digestOf(JSON.stringify(options))}`
    }
    case "MessageStatusChanged":
      return `status:${event.engineMessageId}:${event.status}`
  }
}

/** Keys stay short whatever the text (an edit may be 4096 characters). */
const digestOf = (text: string) => createHash("sha256").update(text).digest("base64url").slice(0, 16)

/**
 * JSON forms for a durable ledger: dates as ISO strings, a poll's secret as base64 (JSON has no
 * bytes; a Uint8Array would come back as an object of numbered keys).
 */
export const encodeHeld = (event: HeldEvent): string => {
  if (event._tag !== "MessageReceived" || event.message.poll?.secret == null) return JSON.stringify(event)
  const { poll } = event.message
  return JSON.stringify({ ...event, message: { ...event.message, poll: { ...poll, secret: Buffer.from(poll.secret!).toString("base64") } } })
}

const revived = <A extends { readonly timestamp: Date }>(record: A): A => ({ ...record, timestamp: new Date(record.timestamp) })

const decodedMessage = (message: InboundMessage): InboundMessage => {
  const secret = message.poll?.secret as unknown as string | null | undefined
  return revived(
    message.poll === undefined
      ? message
      : { ...message, poll: { ...message.poll, secret: secret == null ? null : new Uint8Array(Buffer.from(secret, "base64")) } }
  )
}

export const decodeHeld = (json: string): HeldEvent => {
  const event = JSON.parse(json) as HeldEvent
  switch (event._tag) {
    case "MessageReceived":
      return EngineEvent.MessageReceived({ message: decodedMessage(event.message) })
    case "ReactionReceived":
      return EngineEvent.ReactionReceived({ reaction: revived(event.reaction) })
    case "MessageEdited":
      return EngineEvent.MessageEdited({ edit: revived(event.edit) })
    case "MessageRevoked":
      return EngineEvent.MessageRevoked({ revoke: revived(event.revoke) })
    case "MessagePinned":
      return EngineEvent.MessagePinned({ pin: revived(event.pin) })
    case "PollVoteReceived":
      return EngineEvent.PollVoteReceived({ vote: revived(event.vote) })
    case "MessageStatusChanged":
      return EngineEvent.MessageStatusChanged({
        engineMessageId: event.engineMessageId,
        status: event.status,
        ...(event.error === undefined ? {} : { error: event.error })
      })
    case "GroupChanged":
      return EngineEvent.GroupChanged({ change: event.change })
    case "LabelChanged":
      return EngineEvent.LabelChanged({ change: event.change })
    case "ContactsChanged":
      return EngineEvent.ContactsChanged({ changes: event.changes })
    case "JoinRequestsChanged":
      return EngineEvent.JoinRequestsChanged({ request: event.request })
  }
}

export const encodeSent = (message: SentMessage): string => JSON.stringify(message)

export const decodeSent = (json: string): SentMessage => {
  const parsed = JSON.parse(json) as Omit<SentMessage, "timestamp"> & { readonly timestamp: string }
  return { ...parsed, timestamp: new Date(parsed.timestamp) }
}
