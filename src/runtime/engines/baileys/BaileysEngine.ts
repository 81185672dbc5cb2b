import { untilStoreIsBack } from "../../storeOutage.js"
import {
  type BaileysEventMap,
  type BinaryNode,
  Browsers,
  DEFAULT_CONNECTION_CONFIG,
  generateMessageIDV2,
  makeWASocket,
  type WASocket
} from "@whiskeysockets/baileys"
import { Cause, Clock, Effect, Layer, Option, Queue, Runtime, Stream } from "effect"
import { gateReceipts, type GatedClient } from "./receiptGate.js"
import {
  type ConnectOptions,
  Engine,
  type EngineConnection,
  EngineError,
  EngineEvent,
  type ReactCommand,
  type SendCommand,
  streamOfEvents,
  takeEventsFrom
} from "../../Engine.js"
import { Cache, type CacheService } from "../../ports/Cache.js"
import { bestEffort } from "../../bestEffort.js"
import { phoneNumberPattern } from "../../../domain/Ids.js"
import { makeStoreAuthState } from "./authState.js"
import { makeDeviceCache } from "./deviceCache.js"
import { makeConnectionTranslator } from "./connectionUpdate.js"
import { engineErrorOf } from "./disconnect.js"
import { terminateSocket, watchForSilence } from "./deadSocket.js"
import { DEFAULT_KEEP_ALIVE_INTERVAL_MS } from "../../../domain/Settings.js"
import { isIgnoredJid, type PhoneOfLid, toWireJid } from "./jids.js"
import { makeBaileysLogger } from "./logger.js"
import { SilenceSignalChatter } from "./signalChatter.js"
import { fromUpdates, fromUpsert } from "./messages.js"
import { redactProxyUrl } from "../../../domain/Session.js"
import { acquireNetworkAgents, socketConfigOf } from "./agents.js"
import { downloadMedia, sendErrorOf, socketTransfer } from "./media.js"
import { contentOf, quotedOf } from "./outbound.js"
import { keyOf, makeMessageActions } from "./messageActions.js"
import { fromPresence, makePresenceOperations } from "./presence.js"
import { fromReactions } from "./reactions.js"
import { makeChannelOperations } from "./channels.js"
import { fromContacts, fromLidPairs, makeContactOperations } from "./contacts.js"
import { fromGroupsUpdate, fromGroupsUpsert, fromParticipantsUpdate, GroupCache, type GroupEventContext, type LidPn } from "./groupEvents.js"
import { makeGroupOperations } from "./groups.js"
import { fromBlocklist, fromContactUpdates, fromMessagePushNames, makeAccountContactOperations, PushNames } from "./accountContacts.js"
import { fromJoinRequest, makeGroupAdminOperations } from "./groupAdmin.js"
import { makeProfileOperations } from "./profile.js"
import { cachedPhoneOfLid, sharedGroupsOf } from "./sharedCache.js"
import { fromLabelAssociation, fromLabelEdit, LabelRegistry, makeLabelOperations } from "./labels.js"
import { fromChatsDelete, fromChatsUpdate, fromChatsUpsert, makeChatOperations } from "./chats.js"
import { fromHistorySet, historyOptionsOf } from "./history.js"
import { CallLog, makeCallOperations } from "./calls.js"
import { statusOptionsOf } from "./status.js"
import { installServerIdentityCheck } from "./serverIdentity.js"

export { meOf } from "./connectionUpdate.js"

/**
 * The real bridge: WhatsApp Web through Baileys. One socket per `connect`, ended with the
 * connection's scope; the actor reconnects by calling `connect` again, so a reconnect is
 * always a fresh socket on the same (Store-backed) credentials.
 */

export interface BaileysEngineOptions {
  /** Where the WhatsApp Web websocket lives; a loopback peer in tests, Baileys' default otherwise. */
  readonly waWebSocketUrl?: string | undefined
  /**
   * An extra CA (PEM) trusted for media uploads and downloads, e.g. a loopback peer's
   * self-signed media server. Not applied to sessions with a proxy.
   */
  readonly mediaCa?: string | undefined
  /**
   * The WhatsApp Web version presented to the server (`WA_VERSION`, `2.3000.1029000000`);
   * Baileys' built-in one when absent. WhatsApp refuses a version it deems outdated (405).
   */
  readonly waVersion?: `${number}.${number}.${number}` | undefined
  /**
   * How often the socket pings WhatsApp (`WA_KEEPALIVE_INTERVAL_MS`, default 20 s); a socket
   * that hears nothing for two of them is cut and the session reconnects (see `deadSocket.ts`).
   */
  readonly keepAliveIntervalMs?: number | undefined
}

/** The version a socket presents: the one given, else the one built into Baileys. */
const versionOf = (engineOptions: BaileysEngineOptions): [number, number, number] => {
  if (engineOptions.waVersion === undefined) return [...DEFAULT_CONNECTION_CONFIG.version]
  const [major, minor, build] = engineOptions.waVersion.split(".").map(Number)
  return [major!, minor!, build!]
}

type ListenedEvent =
  | "connection.update"
  | "creds.update"
  | "messages.upsert"
  | "messages.update"
  | "messages.reaction"
  | "groups.upsert"
  | "groups.update"
  | "group-participants.update"
  | "labels.edit"
  | "labels.association"
  | "contacts.upsert"
  | "contacts.update"
  | "lid-mapping.update"
  | "presence.update"
  | "blocklist.set"
  | "blocklist.update"
  | "group.join-request"
  | "messaging-history.set"
  | "chats.upsert"
  | "chats.update"
  | "chats.delete"
  | "call"

/** The Baileys events the engine listens to, in the order they happened. */
type RawEvent =
  | { [K in ListenedEvent]: { readonly name: K; readonly data: BaileysEventMap[K] } }[ListenedEvent]
  /**
   * The server's `<ack class=message>` for a message we sent: WhatsApp's one tick. rc14 emits
   * no event for it (only error acks become a `messages.update`), so we read the stanza.
   */
  | { readonly name: "server.ack"; readonly data: { readonly id: string; readonly error: string | undefined } }
  /** The LID ↔ phone pairs of the members of a group the connection read (see `GroupCache`). */
  | { readonly name: "group.members"; readonly data: ReadonlyArray<LidPn> }

const SERVER_ACK = "CB:ack,class:message"

/** One Baileys event read by several translators (e.g. a message and the sender's push name): all their events, in order. */
const inOrder = (...translations: ReadonlyArray<Effect.Effect<ReadonlyArray<EngineEvent>>>) =>
  Effect.map(Effect.all(translations), (lists) => lists.flat())

/** The ids of the messages of an upsert. */
const idsOf = ({ messages }: BaileysEventMap["messages.upsert"]): ReadonlyArray<string> =>
  messages.flatMap((message) => message.key.id ? [message.key.id] : [])

/**
 * `ws` waits up to 30 s for a close handshake on a dead network; a stop must not, nor leave the
 * socket open behind it for that long: whatever is still open after 2 s is cut. Interruptible,
 * for it runs as a finalizer, where the timeout could not otherwise stop the wait.
 */
const endSocket = (sock: WASocket) =>
  Effect.promise(() => sock.end(undefined).catch(() => undefined)).pipe(
    Effect.interruptible,
    Effect.timeout("2 seconds"),
    Effect.ignore,
    Effect.ensuring(Effect.sync(() => terminateSocket(sock)))
  )

const connect = (engineOptions: BaileysEngineOptions, options: ConnectOptions, cache: Option.Option<CacheService>) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runPromise(runtime)
    const { state, saveCreds } = yield* makeStoreAuthState(options.auth)
    const agents = yield* acquireNetworkAgents(options.proxyUrl, engineOptions.mediaCa)
    const logger = makeBaileysLogger(runtime, {
      sessionId: options.sessionId,
      ...Option.match(options.proxyUrl, { onNone: () => ({}), onSome: (url) => ({ proxy: redactProxyUrl(url) }) })
    })
    // Baileys' emitter is synchronous: each event is handed over in order (`raw`) and worked
    // on in a fiber, which feeds the connection's events (`events`).
    const raw = yield* Queue.unbounded<RawEvent>()
    const events = yield* Queue.unbounded<EngineEvent>()
    const listeners = new Map<keyof BaileysEventMap, (data: never) => void>()
    // What Baileys' group sends ask instead of fetching the metadata each time.
    const groups = new GroupCache(
      (pairs) => void Queue.unsafeOffer(raw, { name: "group.members", data: pairs }),
      Option.getOrUndefined(Option.map(cache, (cache) => sharedGroupsOf(cache, options.sessionId, runtime)))
    )
    const labelRegistry = new LabelRegistry()
    const pushNames = new PushNames()
    const calls = new CallLog()
    const keepAliveIntervalMs = engineOptions.keepAliveIntervalMs ?? DEFAULT_KEEP_ALIVE_INTERVAL_MS

    const sock = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          makeWASocket({
            auth: state,
            logger,
            browser: Browsers.ubuntu("Switchboard"),
            ...historyOptionsOf(options.settings.historySync),
            markOnlineOnConnect: options.settings.markOnlineOnConnect,
            shouldIgnoreJid: isIgnoredJid,
            cachedGroupMetadata: groups.lookup,
            // Contacts' devices from the Store: a restart goes on with the Signal sessions it has.
            userDevicesCache: makeDeviceCache(options.auth, runtime),
            // Retry receipts: WhatsApp asks us to re-encrypt a message we sent.
            getMessage: async (key) => {
              if (!key.id) return undefined
              const sent = await run(options.lookupSent(key.id))
              return Option.isSome(sent) ? { conversation: sent.value.text } : undefined
            },
            version: versionOf(engineOptions),
            keepAliveIntervalMs,
            ...(engineOptions.waWebSocketUrl === undefined ? {} : { waWebSocketUrl: engineOptions.waWebSocketUrl }),
            ...socketConfigOf(agents)
          }),
        catch: (error) => engineErrorOf("CONNECT", error)
      }),
      (sock) =>
        Effect.gen(function*() {
          // Our listeners go first, so the close that `end` emits is not reported as news.
          for (const [name, listener] of listeners) sock.ev.off(name, listener as never)
          sock.ws.off(SERVER_ACK, onServerAck)
          // A `creds.update` still queued (e.g. the prekey counters after an upload) must not
          // be lost with the queue: Baileys has already applied it to `state.creds`. On a 401
          // the actor wipes the credentials after this, so the wipe still comes last.
          yield* bestEffort("baileys: saving the credentials as the connection closes")(saveCreds())
        }).pipe(
          // Whatever became of the save, the socket is ended: one left open stays logged in.
          Effect.ensuring(endSocket(sock)),
          Effect.ensuring(Effect.zipRight(Queue.shutdown(raw), Queue.shutdown(events)))
        )
    )

    // Created with the socket, before it opens: every frame goes through the gate.
    const gate = gateReceipts(sock.ws as unknown as GatedClient, (error) =>
      Runtime.runFork(runtime)(Effect.logDebug("baileys: a frame held for a receipt could not be written", error)))
    yield* Effect.addFinalizer(() => Effect.sync(gate.close))

    // Released before the socket (scopes release in reverse): no cut while it is being ended.
    yield* Effect.acquireRelease(Effect.sync(() => watchForSilence(sock, keepAliveIntervalMs)), (stop) => Effect.sync(stop))

    function onServerAck(node: BinaryNode) {
      const id = node.attrs["id"]
      if (id !== undefined) Queue.unsafeOffer(raw, { name: "server.ack", data: { id, error: node.attrs["error"] } })
    }
    sock.ws.on(SERVER_ACK, onServerAck)
    groups.attach((jid) => sock.groupMetadata(jid))

    const listen = <K extends ListenedEvent>(name: K) => {
      const listener = (data: BaileysEventMap[K]) => void Queue.unsafeOffer(raw, { name, data } as RawEvent)
      listeners.set(name, listener as (data: never) => void)
      sock.ev.on(name, listener)
    }
    listen("creds.update")
    listen("connection.update")
    listen("messages.upsert")
    listen("messages.update")
    listen("messages.reaction")
    listen("groups.upsert")
    listen("groups.update")
    listen("group-participants.update")
    listen("labels.edit")
    listen("labels.association")
    listen("contacts.upsert")
    listen("contacts.update")
    listen("lid-mapping.update")
    listen("presence.update")
    listen("blocklist.set")
    listen("blocklist.update")
    listen("group.join-request")
    listen("messaging-history.set")
    listen("chats.upsert")
    listen("chats.update")
    listen("chats.delete")
    listen("call")

    const mappingStore: PhoneOfLid = (lid) =>
      Effect.tryPromise(() => sock.signalRepository.lidMapping.getPNForLID(lid)).pipe(
        Effect.map(Option.fromNullable),
        Effect.orElseSucceed(() => Option.none<string>())
      )
    const phoneOfLid = Option.match(cache, {
      onNone: () => mappingStore,
      onSome: (cache) => cachedPhoneOfLid(cache, options.sessionId, mappingStore)
    })

    const groupContext: GroupEventContext = {
      cache: groups,
      me: () => state.creds.me,
      phoneOfLid,
      // the group the account was just added to: read once, not for longer than this
      fetch: (jid) =>
        Effect.tryPromise(() => sock.groupMetadata(jid)).pipe(Effect.timeout("10 seconds"), Effect.option)
    }

    const connectionEvents = makeConnectionTranslator(() => state.creds)
    const translate = (event: RawEvent): Effect.Effect<ReadonlyArray<EngineEvent>> => {
      switch (event.name) {
        case "creds.update":
          // Persisted before the next event is looked at: a 515 restart right after pairing
          // must find the new credentials in the Store.
          return Effect.as(untilStoreIsBack(saveCreds(event.data), "saving the session's credentials"), [])
        case "connection.update":
          return Effect.map(Clock.currentTimeMillis, (now) => connectionEvents(event.data, now))
        case "messages.upsert":
          return inOrder(
            fromUpsert(event.data, phoneOfLid, { lookupPoll: options.lookupPoll, me: () => state.creds.me }),
            fromMessagePushNames(event.data, phoneOfLid, pushNames)
          ).pipe(Effect.tap((events) => gate.handedOver(idsOf(event.data), events)))
        case "messages.update":
          return Effect.succeed(fromUpdates(event.data))
        case "messages.reaction":
          return fromReactions(event.data, phoneOfLid)
        case "groups.upsert":
          return fromGroupsUpsert(event.data, groupContext)
        case "groups.update":
          return fromGroupsUpdate(event.data, groupContext)
        case "group-participants.update":
          return fromParticipantsUpdate(event.data, groupContext)
        case "labels.edit":
          return Effect.succeed(fromLabelEdit(event.data, labelRegistry))
        case "labels.association":
          return fromLabelAssociation(event.data, phoneOfLid)
        case "contacts.upsert":
          return fromContacts(event.data, phoneOfLid)
        case "contacts.update":
          return inOrder(fromContacts(event.data, phoneOfLid), fromContactUpdates(event.data, phoneOfLid, pushNames))
        case "blocklist.set":
        case "blocklist.update":
          return fromBlocklist(event.data, phoneOfLid)
        case "group.join-request":
          return fromJoinRequest(event.data, phoneOfLid)
        case "lid-mapping.update":
          return Effect.succeed(fromLidPairs([event.data]))
        case "presence.update":
          return fromPresence(event.data, phoneOfLid)
        case "messaging-history.set":
          return fromHistorySet(event.data, { phoneOfLid, me: () => state.creds.me })
        case "chats.upsert":
          return fromChatsUpsert(event.data, phoneOfLid)
        case "chats.update":
          return fromChatsUpdate(event.data, phoneOfLid)
        case "chats.delete":
          return fromChatsDelete(event.data, phoneOfLid)
        case "call":
          return Effect.map(Effect.forEach(event.data, (call) => calls.translate(call, phoneOfLid)), (events) => events.flat())
        case "group.members":
          // kept where Baileys looks up LIDs (sends, decryption, our own lookups) before reporting
          return Effect.promise(() => sock.signalRepository.lidMapping.storeLIDPNMappings([...event.data]).catch(() => undefined)).pipe(
            Effect.as(fromLidPairs(event.data))
          )
        case "server.ack":
          // An error ack is reported by Baileys itself as a messages.update with ERROR.
          return Effect.succeed(
            event.data.error === undefined
              ? [EngineEvent.MessageStatusChanged({ engineMessageId: event.data.id, status: "sent" })]
              : []
          )
      }
    }

    // One fiber, in order; it stops after `Closed` so nothing (not even creds) is written
    // behind the actor's back once it has been told the connection is over.
    yield* Stream.fromQueue(raw).pipe(
      Stream.mapEffect(translate),
      Stream.flattenIterables,
      Stream.takeUntil((event) => event._tag === "Closed"),
      Stream.runForEach((event) => Queue.offer(events, event)),
      // A defect here (the Store failing) must still end the connection, or the actor waits forever.
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.void : Effect.zipRight(
          Effect.logError("baileys: event handling failed", cause),
          Queue.offer(events, EngineEvent.Closed({
            reason: { kind: "retry", code: "ENGINE_FAILED", message: "baileys: handling a connection event failed" }
          }))
        )
      ),
      Effect.forkScoped
    )

    // As many as are waiting, as a stream's chunk took them (Effect's default chunk size).
    const takeEvents = takeEventsFrom(events, 4096)
    /** Stored: the receipts of the messages they came from may go (see `receiptGate.ts`). */
    const acknowledge = (stored: ReadonlyArray<EngineEvent>) => Effect.sync(() => gate.acknowledged(stored))
    return {
      takeEvents,
      acknowledge,
      get events() {
        return streamOfEvents(takeEvents, acknowledge)
      },
      send: (command) => send(sock, command),
      react: (command) => react(sock, command),
      downloadMedia: (media) => downloadMedia(socketTransfer(sock, agents.dispatcher), media),
      requestPairingCode: (phoneNumber) => requestPairingCode(sock, phoneNumber),
      markRead: (chatId, ids) =>
        Effect.tryPromise({
          try: () => sock.readMessages(ids.map((id) => ({ remoteJid: toWireJid(chatId), id, fromMe: false }))),
          catch: (error) => engineErrorOf("MARK_READ", error)
        }),
      logout: Effect.tryPromise({ try: () => sock.logout(), catch: (error) => engineErrorOf("LOGOUT", error) }),
      groups: { ...makeGroupOperations(sock, groups, phoneOfLid), ...makeGroupAdminOperations(sock, groups, phoneOfLid) },
      channels: makeChannelOperations(sock),
      labels: makeLabelOperations(sock, () => state.creds, labelRegistry),
      contacts: {
        ...makeContactOperations(sock),
        ...makeAccountContactOperations(sock, { phoneOfLid, pushNames, dispatcher: agents.dispatcher })
      },
      messages: makeMessageActions(sock, () => state.creds.me),
      presence: makePresenceOperations(sock, () => state.creds.me),
      chats: makeChatOperations(sock),
      profile: makeProfileOperations(sock, () => state.creds.me),
      calls: makeCallOperations(sock, calls)
    } satisfies EngineConnection
  })

/** Sends with the id the gateway chose, so a resend after a crash is the same message. */
const send = (sock: WASocket, command: SendCommand) =>
  Effect.gen(function*() {
    const jid = toWireJid(command.chatId)
    const quoted = command.quoted === undefined ? undefined : quotedOf(command.chatId, command.quoted)
    const mentions = command.mentions?.map(toWireJid) ?? []
    const sent = yield* Effect.tryPromise({
      try: () =>
        sock.sendMessage(
          jid,
          contentOf(command.content, { mentions, forwarded: command.forwarded === true }),
          { messageId: command.engineMessageId, ...(quoted === undefined ? {} : { quoted }), ...statusOptionsOf(command) }
        ),
      catch: sendErrorOf
    })
    const seconds = Number(sent?.messageTimestamp?.toString() ?? 0)
    return {
      engineMessageId: sent?.key.id ?? command.engineMessageId,
      timestamp: seconds > 0 ? new Date(seconds * 1000) : new Date()
    }
  })

/** A reaction names its message by key (see `keyOf`). */
const react = (sock: WASocket, { chatId, emoji, target }: ReactCommand) =>
  Effect.tryPromise({
    try: () => sock.sendMessage(toWireJid(chatId), { react: { text: emoji, key: keyOf(chatId, target) } }),
    catch: (error) => engineErrorOf("REACT", error)
  }).pipe(Effect.asVoid)

const requestPairingCode = (sock: WASocket, phoneNumber: string) =>
  Effect.gen(function*() {
    const digits = phoneNumberPattern.exec(phoneNumber.trim())?.[1]
    if (digits === undefined) {
      return yield* new EngineError({ code: "INVALID_PHONE_NUMBER", message: "phoneNumber must be 6–15 digits", transient: false })
    }
    return yield* Effect.tryPromise({
      try: () => sock.requestPairingCode(digits),
      catch: (error) => engineErrorOf("PAIRING_CODE", error)
    })
  })

/**
 * The engine; with the gateway's `Cache` when the layer is built where there is one (the
 * gateway's core always has), for group metadata and LID lookups (see `sharedCache.ts`).
 * Building it makes Baileys check the server's identity and pairing signatures, process-wide
 * (./serverIdentity.ts), before any socket exists.
 */
export const BaileysEngineLive = (engineOptions: BaileysEngineOptions = {}): Layer.Layer<Engine> =>
  Layer.provideMerge(
    Layer.effect(
      Engine,
      Effect.map(Effect.zipLeft(Effect.serviceOption(Cache), Effect.sync(installServerIdentityCheck)), (cache) =>
        Engine.of({
          name: "baileys",
          clientVersion: versionOf(engineOptions).join("."),
          newMessageId: () => generateMessageIDV2(),
          // Everything Baileys keeps about a session is its AuthState, which the gateway wipes.
          forget: () => Effect.void,
          connect: (options) => connect(engineOptions, options, cache)
        }))
    ),
    SilenceSignalChatter
  )
