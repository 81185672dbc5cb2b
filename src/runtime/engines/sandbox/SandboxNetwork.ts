import { Clock, Context, Deferred, Duration, Effect, HashMap, Layer, Option, Queue, Ref, Scope } from "effect"
import type { Me } from "../../../domain/Session.js"
import type { MediaStore } from "../../ports/MediaStore.js"
import { untilStoreIsBack } from "../../storeOutage.js"
import {
  type CloseReason,
  EngineError,
  type EngineEvent,
  type InboundMedia,
  type ReactCommand,
  type SendCommand,
  takeEventsFrom
} from "../../Engine.js"
import type { ChannelOperations, ContactOperations, GroupOperations, LabelOperations } from "../../EngineDirectory.js"
import type { MessageActionOperations, PresenceOperations } from "../../EngineMessageActions.js"
import type { HistorySync } from "../../../domain/SessionSettings.js"
import type { AccountContactOperations, CallOperations, ChatOperations, GroupAdminOperations, ProfileOperations } from "../../EngineAccount.js"
import { makeCalls, type SandboxCalls } from "./Calls.js"
import { channelsOf } from "./Channels.js"
import { chatsOf, makeConversations } from "./Chats.js"
import { makeDirectory } from "./Directory.js"
import { groupAdminOf } from "./GroupAdmin.js"
import { groupsOf } from "./Groups.js"
import { labelsOf } from "./Labels.js"
import { LineOperations, type OperationMakers } from "./LineOperations.js"
import { isHeldEvent, SandboxLedger, untilLedgerIsBack } from "./Ledger.js"
import { makeMediaServer } from "./MediaServer.js"
import { messageActionsOf } from "./MessageActions.js"
import { messagingOf, type Payload, payloadOfContent } from "./Messaging.js"
import { makePictures } from "./Pictures.js"
import { makePresence } from "./Presence.js"
import { profilesOf } from "./Profiles.js"
import { statusOf } from "./Status.js"
import { makeSwitchboard } from "./Switchboard.js"

export { sandboxPhoneOf } from "./identity.js"

/**
 * The simulated WhatsApp network shared by all sandbox sessions of this process. Sessions find
 * each other by their deterministic sandbox phone numbers; messages and receipts for a session
 * that is away wait here until it is Ready again. The routing lives in `Switchboard.ts` and
 * `Messaging.ts`, edits, revokes, pins and votes in `MessageActions.ts`, presence in
 * `Presence.ts`, the groups, channels and labels in `Directory.ts`, `Groups.ts`, `Channels.ts`
 * and `Labels.ts`, group settings, pictures and join requests in `GroupAdmin.ts`, profiles,
 * blocklists and id lookups in `Profiles.ts` (pictures on `Pictures.ts`' media server); this module ties it to connection scopes and exposes the injectable faults.
 */

/** Faults a test (or a curious user) can inject to exercise the runtime's resilience. */
export interface SandboxFaults {
  /** The live connection emits `Closed` (by default a retryable `CONNECTION_LOST`) and ends. */
  readonly dropConnection: (sessionId: string, reason?: CloseReason) => Effect.Effect<void>
  /** `connect` for the session fails with a transient `CONNECTION_REFUSED` for this long. */
  readonly refuseConnections: (sessionId: string, duration: Duration.DurationInput) => Effect.Effect<void>
  /** Status changes scheduled from now on are emitted after this delay. */
  readonly delayAcks: (duration: Duration.DurationInput) => Effect.Effect<void>
  /** How many times `connect` succeeded for the session in this process. */
  readonly connectionCount: (sessionId: string) => Effect.Effect<number>
  /** Whether the session has a live (not closed) connection, Ready or still linking. */
  readonly isOnline: (sessionId: string) => Effect.Effect<boolean>
  /** Marks the session as a WhatsApp Business account (labels work) or not; remembered by the network. */
  readonly setBusiness: (sessionId: string, business: boolean) => Effect.Effect<void>
}

/** A session's presence on the network, held for as long as its connection's scope is open. */
export interface SandboxLine {
  readonly me: Me
  /** The next event (see `EngineConnection.takeEvents`), one at a time; still held by the network. */
  readonly takeEvents: Effect.Effect<ReadonlyArray<EngineEvent>>
  /** The session stored these events: the network stops holding them, and senders hear `delivered` (see `attach`). */
  readonly acknowledge: (events: ReadonlyArray<EngineEvent>) => Effect.Effect<void>
  /** Emits a linking event (`Qr`, `Authenticating`) unless the line has been closed meanwhile. */
  readonly emit: (event: EngineEvent) => Effect.Effect<void>
  /** Logged in: emits `Ready`, then everything held for the session that its consumer has not taken yet. */
  readonly becomeReady: Effect.Effect<void>
  /** Completes once `Closed` was emitted (dropped, replaced, logged out, QR expired). */
  readonly awaitClosed: Effect.Effect<void>
  /** Emits `Closed` and takes the session offline; `false` when the line was already closed. */
  readonly close: (reason: CloseReason) => Effect.Effect<boolean>
  /** Sending an id again is a resend: nothing is delivered twice. */
  readonly send: (command: SendCommand) => Effect.Effect<{ readonly engineMessageId: string; readonly timestamp: Date }, EngineError>
  readonly markRead: (chatId: string, engineMessageIds: ReadonlyArray<string>) => Effect.Effect<void, EngineError>
  readonly react: (command: ReactCommand) => Effect.Effect<void, EngineError>
  readonly downloadMedia: (media: InboundMedia) => Effect.Effect<Uint8Array, EngineError>
  readonly groups: GroupOperations & GroupAdminOperations
  readonly channels: ChannelOperations
  readonly labels: LabelOperations
  readonly contacts: ContactOperations & AccountContactOperations
  readonly messages: MessageActionOperations
  readonly presence: PresenceOperations
  readonly chats: ChatOperations
  /** Just linked: the phone sends its conversations as history batches, as much as `historySync` asks. */
  readonly offerHistory: (historySync: HistorySync) => Effect.Effect<void>
  readonly profile: ProfileOperations
  readonly calls: CallOperations
}

export interface SandboxNetworkOptions {
  /** How long after the first QR the simulated phone scans it; 0 = only via a pairing code. */
  readonly pairDelay: Duration.DurationInput
  /** Delay before each status change (sent, delivered, read) reaches the sender. */
  readonly ackDelay?: Duration.DurationInput | undefined
  /** Every session is a WhatsApp Business account unless `setBusiness` says otherwise (default false). */
  readonly businessByDefault?: boolean | undefined
  /** How long a call rings before it times out (default 45 seconds). */
  readonly callTimeout?: Duration.DurationInput | undefined
}

export class SandboxNetwork extends Context.Tag("switchboard/SandboxNetwork")<SandboxNetwork, SandboxFaults & {
  readonly pairDelay: Duration.Duration
  /** Puts the session on the network (replacing its previous connection) until the scope closes. */
  readonly attach: (sessionId: string) => Effect.Effect<SandboxLine, EngineError, Scope.Scope>
  /** Drops what the network keeps for a deleted session: held events, its phone, the messages it sent. */
  readonly forget: (sessionId: string) => Effect.Effect<void>
  /** Rings a ready session from a phone or another sandbox session (see `Calls.ts`). */
  readonly ring: SandboxCalls["ring"]
}>() {
  /**
   * The network, remembering what it holds in the `SandboxLedger` it is given, and keeping the
   * media it carries in the `MediaStore`.
   */
  static readonly layer = (options: SandboxNetworkOptions): Layer.Layer<SandboxNetwork, never, SandboxLedger | MediaStore> =>
    Layer.scoped(SandboxNetwork, make(options))
}

/**
 * A line's `takeEvents`, `Closed` the last. One at a time, except `sent` receipts in a row, which
 * go together (up to `SENT_RECEIPTS_PER_CHUNK`) so that the session applies them in one
 * transaction (see `applyReceipts`): one at a time, a receipt is half a dozen round trips on
 * Postgres, each waiting its turn of a busy event loop, and receipts fell behind the sends.
 * Handing an event over releases nothing: the network holds it until the line's `acknowledge`.
 */
const takeEventsOf = (inbox: Queue.Dequeue<EngineEvent>) => {
  /** Taken off the inbox, not yet handed over. */
  const waiting: Array<EngineEvent> = []
  const refill = Effect.map(takeEventsFrom(inbox, SENT_RECEIPTS_PER_CHUNK), (events) => void waiting.push(...events))
  return Effect.suspend(() =>
    Effect.map(waiting.length > 0 ? Effect.void : refill, () => {
      let size = Math.min(waiting.length, 1)
      if (size === 1 && isSentReceipt(waiting[0]!)) while (size < waiting.length && isSentReceipt(waiting[size]!)) size++
      return waiting.splice(0, size)
    })
  )
}

const SENT_RECEIPTS_PER_CHUNK = 256

const isSentReceipt = (event: EngineEvent) => event._tag === "MessageStatusChanged" && event.status === "sent"

const connectionLost: CloseReason = {
  kind: "retry",
  code: "CONNECTION_LOST",
  message: "sandbox: the connection was dropped (fault injected)"
}

const make = (options: SandboxNetworkOptions) =>
  Effect.gen(function*() {
    const ledger = untilLedgerIsBack(yield* SandboxLedger)
    const remembered = yield* ledger.load
    const switchboard = yield* makeSwitchboard(Duration.decode(options.ackDelay ?? Duration.zero), ledger, remembered)
    const { serialized } = switchboard
    const directory = yield* makeDirectory(switchboard, ledger, remembered.directory, options.businessByDefault ?? false)
    const groups = groupsOf(switchboard, directory)
    const pictures = yield* makePictures
    const profiles = profilesOf(switchboard, directory, pictures)
    const groupAdmin = groupAdminOf(groups, directory, pictures)
    const channels = channelsOf(switchboard, directory)
    const labels = labelsOf(switchboard, directory)
    const conversations = yield* makeConversations
    const chats = chatsOf(switchboard, conversations, groups.otherMemberSessions)
    const status = statusOf(switchboard)
    const messaging = messagingOf(switchboard, {
      toGroup: groups.toGroup,
      toChannel: channels.toChannel,
      reactInGroup: groups.reactInGroup,
      toStatus: status.post
    }, conversations, profiles.blocks)
    const messageActions = messageActionsOf(switchboard, {
      inGroup: groups.otherMemberSessions,
      inChannel: channels.audienceOf,
      revisePost: channels.revisePost,
      statusAudience: status.tellAudience
    })
    const presence = yield* makePresence(switchboard)
    const calls = yield* makeCalls(switchboard, profiles.blocks, Duration.decode(options.callTimeout ?? "45 seconds"))
    const mediaServer = yield* makeMediaServer
    const refusedUntil = yield* Ref.make(HashMap.empty<string, number>())
    const connectionCounts = yield* Ref.make(HashMap.empty<string, number>())
    const nextLineId = yield* Ref.make(0)

    const refuseIfBlocked = (sessionId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const until = HashMap.get(yield* Ref.get(refusedUntil), sessionId)
        if (Option.isSome(until) && now < until.value) {
          return yield* new EngineError({
            code: "CONNECTION_REFUSED",
            message: "sandbox: the network refuses connections for this session for now (fault injected)",
            transient: true
          })
        }
      })

    const payloadOf = ({ content, engineMessageId, forwarded }: SendCommand): Effect.Effect<Payload, EngineError> =>
      (content.type === "media"
        ? Effect.map(mediaServer.upload(engineMessageId, content.media), (media): Payload => ({
          type: "media",
          kind: content.media.kind,
          caption: content.media.caption,
          media
        }))
        : Effect.succeed<Payload>(payloadOfContent(content))).pipe(
          Effect.map((payload): Payload => forwarded === true ? { ...payload, forwarded: true } : payload)
        )

    /** A deleted session is forgotten by the network, and its uploads go from the media server. */
    const forget = (sessionId: string) =>
      Effect.gen(function*() {
        const sent = yield* serialized(Ref.get(switchboard.sentMessages))
        const uploads = Array.from(HashMap.filter(sent, (message) => message.senderSessionId === sessionId).pipe(HashMap.keys))
        yield* serialized(Effect.all([switchboard.forget(sessionId), directory.forget(sessionId), presence.forget(sessionId)], { discard: true }))
        yield* mediaServer.remove(uploads)
      })

    const operationMakers: OperationMakers = {
      account: profiles.operations,
      groups: (line) => ({ ...groups.operations(line), ...groupAdmin(line) }),
      channels: channels.operations,
      labels: labels.operations,
      directory: directory.contacts,
      messages: messageActions.operations,
      presence: presence.operations,
      chats: chats.operations,
      calls: calls.operations
    }

    const attach = (sessionId: string) =>
      Effect.gen(function*() {
        yield* refuseIfBlocked(sessionId)
        const me = yield* serialized(profiles.meOf(sessionId))
        const inbox = yield* Queue.unbounded<EngineEvent>()
        const closed = yield* Deferred.make<void>()
        const line = { sessionId, lineId: yield* Ref.getAndUpdate(nextLineId, (id) => id + 1), me, inbox, closed }
        // The queue is shut down only after the line left the switchboard, which is the only
        // place that offers to it: an offer can never hit a shut-down queue. The unplugging is
        // added to the connection's scope as it is (`Scope.addFinalizerExit`), not through
        // `Effect.acquireRelease`, which keeps a copy of the fiber's FiberRefs (a map of every
        // FiberRef, ~2.4 KB) with the finalizer for as long as the connection lives.
        yield* Effect.uninterruptible(Effect.zipRight(
          serialized(switchboard.plugIn(line)).pipe(
            Effect.zipRight(Ref.update(connectionCounts, HashMap.modifyAt(sessionId, (n) => Option.some(Option.getOrElse(n, () => 0) + 1))))
          ),
          Effect.flatMap(Effect.scope, (scope) =>
            // Made when the scope closes: built now, its effects would be held as long too.
            // Uninterruptible, as acquireRelease's release is: whoever closes the scope.
            Scope.addFinalizerExit(scope, () =>
              Effect.uninterruptible(serialized(Effect.zipRight(switchboard.unplug(line), presence.connectionChanged(sessionId))).pipe(
                Effect.zipRight(Queue.shutdown(inbox))
              ))))
        ))
        // "The session has it" is decided here, when the consumer acknowledges what it stored
        // (issue 21: handed over was not enough; a process killed between the hand-over and the
        // store lost the message, while its sender had heard `delivered`). Until then the event
        // stays held, in the ledger too, so whatever was handed over but not acknowledged when
        // the line closes, the actor is interrupted or the process dies is offered again when
        // the session is next Ready; the Store takes a message it has already once. Uninterruptible,
        // so that an interrupted acknowledgement never releases an event without its receipt.
        const acknowledge = (events: ReadonlyArray<EngineEvent>) => {
          const held = events.filter(isHeldEvent)
          return held.length === 0 ? Effect.void : untilStoreIsBack(
            serialized(Effect.uninterruptible(Effect.forEach(held, (event) => switchboard.consumed(line, event), { discard: true }))),
            "acknowledging events to the sandbox network"
          )
        }
        return Object.assign(new LineOperations(line, operationMakers), {
          me,
          awaitClosed: Deferred.await(closed),
          takeEvents: takeEventsOf(inbox),
          acknowledge,
          emit: (event: EngineEvent) => serialized(switchboard.emitIfLive(line, event)),
          becomeReady: serialized(Effect.zipRight(switchboard.becomeReady(line), presence.connectionChanged(sessionId))),
          close: (reason: CloseReason) => serialized(switchboard.close(line, reason)),
          send: (command: SendCommand) =>
            // Uploading happens outside the network's lock: big media must not stall everyone else.
            payloadOf(command).pipe(Effect.flatMap((payload) => serialized(messaging.send(line, command, payload)))),
          markRead: (chatId: string, ids: ReadonlyArray<string>) => serialized(messaging.markRead(line, chatId, ids)),
          react: (command: ReactCommand) => serialized(messaging.react(line, command)),
          downloadMedia: mediaServer.download,
          offerHistory: (historySync: HistorySync) => chats.offerHistory(line, historySync)
        }) satisfies SandboxLine
      })

    return SandboxNetwork.of({
      pairDelay: Duration.decode(options.pairDelay),
      attach,
      forget,
      ring: calls.ring,
      dropConnection: (sessionId, reason = connectionLost) =>
        serialized(
          switchboard.liveLine(sessionId).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.void,
              onSome: (line) => Effect.asVoid(switchboard.close(line, reason))
            }))
          )
        ),
      refuseConnections: (sessionId, duration) =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => Ref.update(refusedUntil, HashMap.set(sessionId, now + Duration.toMillis(duration))))
        ),
      delayAcks: switchboard.setAckDelay,
      connectionCount: (sessionId) =>
        Ref.get(connectionCounts).pipe(Effect.map((counts) => Option.getOrElse(HashMap.get(counts, sessionId), () => 0))),
      isOnline: (sessionId) => serialized(switchboard.liveLine(sessionId)).pipe(Effect.map(Option.isSome)),
      setBusiness: directory.setBusiness
    })
  })
