import { describe, expect, it } from "@effect/vitest"
import { defaultSessionSettings } from "../src/domain/SessionSettings.js"
import { Chunk, Deferred, Duration, Effect, Exit, Layer, Option, Ref, Scope, Stream, TestClock } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type AuthState, Engine, type EngineEvent, streamOfEvents } from "../src/runtime/Engine.js"
import { type DirectoryKind, type HeldEntry, SandboxLedger, type SentMessage } from "../src/runtime/engines/sandbox/Ledger.js"
import { SandboxEngineLive } from "../src/runtime/engines/sandbox/SandboxEngine.js"
import { newSandboxMessageId } from "../src/runtime/engines/sandbox/identity.js"
import { type SandboxFaults, SandboxNetwork, type SandboxNetworkOptions, sandboxPhoneOf } from "../src/runtime/engines/sandbox/SandboxNetwork.js"
import { drained, linkedAuth, mediaStore, openReady, openSession, sandbox, waitFor } from "./support/sandboxSessions.js"
import { heldRows, ledgerAt } from "./support/sqlLedger.js"

// --- harness -----------------------------------------------------------------------------

/** A network on a ledger that outlives it: building this layer again is a restarted gateway. */
const sandboxOn = (ledger: SandboxLedger["Type"], options: SandboxNetworkOptions, media = mediaStore()) =>
  SandboxEngineLive.pipe(
    Layer.provideMerge(SandboxNetwork.layer(options)),
    Layer.provide(Layer.succeed(SandboxLedger, ledger)),
    Layer.provideMerge(media)
  )

/** The durable ledger's contract in plain maps, counting the `hold` writes per session. */
const makeMemoryLedger = () => {
  const owners = new Map<string, string>()
  const held = new Map<string, HeldEntry>()
  const sent = new Map<string, SentMessage>()
  const holdWrites = new Map<string, number>()
  const records = new Map<string, string>()
  const rowId = (sessionId: string, key: string) => `${sessionId} ${key}`
  const ledger: SandboxLedger["Type"] = {
    load: Effect.sync(() => ({
      phoneOwners: [...owners],
      held: [...held.values()].sort((a, b) => a.seq - b.seq),
      sent: [...sent],
      directory: [...records].map(([row, json]) => {
        const [kind, id] = JSON.parse(row) as [DirectoryKind, string]
        return { kind, id, json }
      })
    })),
    rememberOwner: (phone, sessionId) => Effect.sync(() => void owners.set(phone, sessionId)),
    hold: (sessionId, key, seq, event) =>
      Effect.sync(() => {
        holdWrites.set(sessionId, (holdWrites.get(sessionId) ?? 0) + 1)
        if (!held.has(rowId(sessionId, key))) held.set(rowId(sessionId, key), { sessionId, key, seq, event })
      }),
    release: (sessionId, key) => Effect.sync(() => void held.delete(rowId(sessionId, key))),
    recordSent: (records) => Effect.sync(() => records.forEach(([engineMessageId, message]) => void sent.set(engineMessageId, message))),
    forgetSession: (sessionId) =>
      Effect.sync(() => {
        for (const [id, entry] of held) if (entry.sessionId === sessionId) held.delete(id)
        for (const [phone, owner] of owners) if (owner === sessionId) owners.delete(phone)
        for (const [id, message] of sent) if (message.senderSessionId === sessionId) sent.delete(id)
      }),
    putRecord: (kind, id, json) =>
      Effect.sync(() => void (json === null ? records.delete(JSON.stringify([kind, id])) : records.set(JSON.stringify([kind, id]), json)))
  }
  return {
    ledger,
    /** What is held for the session, in seq order, as "msg:<id>" / "status:<id>:<status>" keys. */
    heldKeys: (sessionId: string) =>
      [...held.values()].filter((entry) => entry.sessionId === sessionId).sort((a, b) => a.seq - b.seq).map((entry) => entry.key),
    holdWrites: (sessionId: string) => holdWrites.get(sessionId) ?? 0,
    owners,
    sent
  }
}

/** The real store is someone else's; an in-memory AuthState is all the engine needs. */
const makeAuth = (initialCreds: Option.Option<unknown> = Option.none()) =>
  Effect.gen(function*() {
    const creds = yield* Ref.make(initialCreds)
    const keys = yield* Ref.make(new Map<string, unknown>())
    const auth: AuthState = {
      readCreds: Ref.get(creds),
      writeCreds: (value) => Ref.set(creds, Option.some(value)),
      getKeys: (type, ids) =>
        Ref.get(keys).pipe(Effect.map((all) =>
          Object.fromEntries(ids.flatMap((id) => all.has(`${type}/${id}`) ? [[id, all.get(`${type}/${id}`)]] : []))
        )),
      setKeys: (changes) =>
        Ref.update(keys, (all) => {
          const next = new Map(all)
          for (const [type, byId] of Object.entries(changes)) {
            for (const [id, value] of Object.entries(byId)) {
              if (value === null) next.delete(`${type}/${id}`)
              else next.set(`${type}/${id}`, value)
            }
          }
          return next
        }),
      clear: Ref.set(creds, Option.none()).pipe(Effect.zipRight(Ref.set(keys, new Map())))
    }
    return { auth, creds }
  })

/** Connects, but nobody consumes the events until the test pulls them one at a time. */
const openIdle = (sessionId: string) =>
  Effect.gen(function*() {
    const engine = yield* Engine
    const scope = yield* Scope.make()
    const connection = yield* engine.connect({ sessionId, auth: linkedAuth, proxyUrl: Option.none(), lookupSent: () => Effect.succeedNone, lookupPoll: () => Effect.succeedNone, settings: defaultSessionSettings("recent") }).pipe(Scope.extend(scope))
    const pull = yield* Stream.toPull(connection.events).pipe(Scope.extend(scope))
    return {
      connection,
      pullOne: pull.pipe(Effect.map(Chunk.toReadonlyArray)),
      goOffline: Scope.close(scope, Exit.void)
    }
  })

const statusOf = (event: EngineEvent) =>
  event._tag === "MessageStatusChanged" ? `${event.engineMessageId}:${event.status}` : event._tag

const faults = SandboxNetwork.pipe(Effect.map((network): SandboxFaults => network))

// --- tests ---------------------------------------------------------------------------------

describe("sandbox identity", () => {
  it("derives a stable 999 number and profile from the session id", () => {
    expect(sandboxPhoneOf("alice")).toMatch(/^999\d{9}$/)
    expect(sandboxPhoneOf("alice")).toBe(sandboxPhoneOf("alice"))
    expect(sandboxPhoneOf("alice")).not.toBe(sandboxPhoneOf("bob"))
  })

  it.scoped("reports that identity in Ready", () =>
    Effect.gen(function*() {
      const alice = yield* openSession("alice")
      const ready = yield* waitFor(alice, "Ready")
      const phone = sandboxPhoneOf("alice")
      expect(ready.me).toMatchObject({ id: `${phone}@c.us`, phone, pushName: `Sandbox ${phone.slice(-4)}` })
      expect(ready.me.lid).toMatch(/^\d{12,15}@lid$/)
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))
})

describe("linking", () => {
  it.scoped("shows a QR, then links by itself after pairDelay and stores creds", () =>
    Effect.gen(function*() {
      const { auth, creds } = yield* makeAuth()
      const alice = yield* openSession("alice", auth)
      const qr = yield* alice.nextEvent
      expect(qr._tag).toBe("Qr")
      if (qr._tag !== "Qr") return
      expect(qr.qr).toMatch(/^sandbox:alice:.+/)
      expect(qr.expiresAt.getTime()).toBe(60_000)

      yield* TestClock.adjust("5 seconds")
      expect((yield* alice.nextEvent)._tag).toBe("Authenticating")
      const ready = yield* alice.nextEvent
      expect(ready._tag).toBe("Ready")
      expect(yield* Ref.get(creds)).toEqual(Option.some({ phone: alice.phone, linkedAt: new Date(5_000).toISOString() }))
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("is Ready at once, without a QR, when creds are stored", () =>
    Effect.gen(function*() {
      const alice = yield* openSession("alice")
      expect((yield* alice.nextEvent)._tag).toBe("Ready")
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("rotates QRs like WhatsApp and gives up after five", () =>
    Effect.gen(function*() {
      const alice = yield* openSession("alice", (yield* makeAuth()).auth)
      const expiries: Array<number> = []
      for (const lifetime of [60, 20, 20, 20, 20]) {
        const qr = yield* alice.nextEvent
        if (qr._tag !== "Qr") throw new Error(`expected a QR, got ${qr._tag}`)
        expiries.push(qr.expiresAt.getTime())
        yield* TestClock.adjust(Duration.seconds(lifetime))
      }
      expect(expiries).toEqual([60_000, 80_000, 100_000, 120_000, 140_000])
      expect(yield* alice.nextEvent).toMatchObject({ _tag: "Closed", reason: { kind: "fatal", code: "QR_EXPIRED" } })
      yield* Deferred.await(alice.ended)
    }).pipe(Effect.provide(sandbox({ pairDelay: 0 }))))

  it.scoped("links through a pairing code when pairDelay is 0", () =>
    Effect.gen(function*() {
      const { auth, creds } = yield* makeAuth()
      const alice = yield* openSession("alice", auth)
      expect((yield* alice.nextEvent)._tag).toBe("Qr")
      yield* TestClock.adjust("30 seconds")
      expect(yield* drained(alice)).toHaveLength(0) // no automatic scan

      const code = yield* alice.connection.requestPairingCode("+15551234567")
      expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/)
      yield* TestClock.adjust("200 millis")
      expect((yield* alice.nextEvent)._tag).toBe("Authenticating")
      expect((yield* alice.nextEvent)._tag).toBe("Ready")
      expect(Option.isSome(yield* Ref.get(creds))).toBe(true)

      const again = yield* Effect.flip(alice.connection.requestPairingCode("+15551234567"))
      expect(again.code).toBe("NOT_LINKING")
    }).pipe(Effect.provide(sandbox({ pairDelay: 0 }))))

  it.scoped("logout closes with logged_out and wipes the creds", () =>
    Effect.gen(function*() {
      const { auth, creds } = yield* makeAuth(Option.some({ phone: "x" }))
      const alice = yield* openSession("alice", auth)
      yield* waitFor(alice, "Ready")
      yield* alice.connection.logout
      expect(yield* alice.nextEvent).toMatchObject({ _tag: "Closed", reason: { kind: "logged_out", code: "LOGGED_OUT" } })
      yield* Deferred.await(alice.ended)
      expect(yield* Ref.get(creds)).toEqual(Option.none())
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))
})

describe("messaging", () => {
  it.scoped("message ids are shaped like WhatsApp's and sort in the order they were made", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const ids: Array<string> = []
      for (let i = 0; i < 4; i++) ids.push((yield* alice.sendText(bob.chatId, `in order ${i}`)).engineMessageId)
      for (const id of ids) expect(id).toMatch(/^SB[0-9A-F]{20}$/)
      expect([...ids].sort()).toEqual(ids)
      // Many within one millisecond too: none made twice, still in order.
      const burst = Array.from({ length: 20_000 }, () => newSandboxMessageId())
      expect(new Set(burst).size).toBe(burst.length)
      expect([...burst].sort()).toEqual(burst)
    }).pipe(Effect.provide(sandbox())))

  it.scoped("two sessions exchange a message: sent → delivered → read", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")

      const { engineMessageId, timestamp } = yield* alice.sendText(bob.chatId, "hi bob")
      expect(engineMessageId).toMatch(/^SB[0-9A-F]{20}$/)

      const received = yield* waitFor(bob, "MessageReceived")
      expect(received.message).toEqual({
        engineMessageId,
        chatId: alice.chatId,
        from: alice.chatId,
        fromPhone: alice.chatId,
        fromLid: expect.stringMatching(/@lid$/),
        type: "text",
        text: "hi bob",
        timestamp
      })
      expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:sent`)
      expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:delivered`)

      yield* bob.connection.markRead(alice.chatId, [engineMessageId])
      expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:read`)
      // Reading twice, or from the wrong chat, changes nothing.
      yield* bob.connection.markRead(alice.chatId, [engineMessageId])
      yield* bob.connection.markRead("15550009999@c.us", [engineMessageId])
      expect(yield* drained(alice)).toHaveLength(0)
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("refuses to send before the session is Ready", () =>
    Effect.gen(function*() {
      const alice = yield* openSession("alice", (yield* makeAuth()).auth)
      const error = yield* Effect.flip(alice.sendText("15550001234@c.us", "too early"))
      expect(error).toMatchObject({ code: "NOT_CONNECTED", transient: true })
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("keeps a message for an offline recipient and delivers it once on reconnect", () =>
    Effect.gen(function*() {
      const bobBefore = yield* openReady("bob")
      yield* bobBefore.goOffline
      expect(yield* (yield* faults).isOnline("bob")).toBe(false)

      const alice = yield* openReady("alice")
      const { engineMessageId } = yield* alice.sendText(bobBefore.chatId, "are you there?")
      expect((yield* drained(alice)).map(statusOf)).toEqual([`${engineMessageId}:sent`])

      const bob = yield* openSession("bob")
      expect((yield* bob.nextEvent)._tag).toBe("Ready")
      expect(yield* bob.nextEvent).toMatchObject({ _tag: "MessageReceived", message: { engineMessageId, text: "are you there?" } })
      expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:delivered`)

      yield* bob.goOffline
      const bobAgain = yield* openSession("bob")
      expect((yield* bobAgain.nextEvent)._tag).toBe("Ready")
      expect(yield* drained(bobAgain)).toHaveLength(0) // never twice
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("keeps status changes for an offline sender until it is back", () =>
    Effect.gen(function*() {
      const network = yield* faults
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      yield* network.delayAcks("10 seconds")
      const { engineMessageId } = yield* alice.sendText(bob.chatId, "read me later")
      yield* waitFor(bob, "MessageReceived")
      yield* alice.goOffline
      yield* bob.connection.markRead(alice.chatId, [engineMessageId])
      yield* TestClock.adjust("10 seconds")

      const aliceBack = yield* openSession("alice")
      expect((yield* aliceBack.nextEvent)._tag).toBe("Ready")
      const statuses = [yield* aliceBack.nextEvent, yield* aliceBack.nextEvent, yield* aliceBack.nextEvent]
      expect(statuses.map(statusOf)).toEqual(["sent", "delivered", "read"].map((s) => `${engineMessageId}:${s}`))
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("an echo contact acknowledges and answers with the same text", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const { engineMessageId } = yield* alice.sendText("15550001234@c.us", "ping")
      const events = [yield* alice.nextEvent, yield* alice.nextEvent, yield* alice.nextEvent]
      expect(events.map(statusOf)).toEqual(["sent", "delivered", "read"].map((s) => `${engineMessageId}:${s}`))
      expect(yield* alice.nextEvent).toMatchObject({
        _tag: "MessageReceived",
        message: { chatId: "15550001234@c.us", from: "15550001234@c.us", type: "text", text: "ping" }
      })
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("a message to a number nobody owns stays at sent", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const { engineMessageId } = yield* alice.sendText("4915112345678@c.us", "hello?")
      yield* TestClock.adjust("1 minute")
      expect((yield* drained(alice)).map(statusOf)).toEqual([`${engineMessageId}:sent`])
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("sending the same id again is a resend, not a second message", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const command = { engineMessageId: engine.newMessageId(), chatId: bob.chatId, content: { type: "text", text: "once" } } as const
      const first = yield* alice.connection.send(command)
      const second = yield* alice.connection.send(command)
      expect(second).toEqual(first)
      const received = (yield* drained(bob)).filter((event) => event._tag === "MessageReceived")
      expect(received).toHaveLength(1)
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("delayAcks holds status changes back for that long", () =>
    Effect.gen(function*() {
      yield* (yield* faults).delayAcks("3 seconds")
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const { engineMessageId } = yield* alice.sendText(bob.chatId, "slow")
      yield* waitFor(bob, "MessageReceived")
      yield* TestClock.adjust("2 seconds")
      expect(yield* drained(alice)).toHaveLength(0)
      yield* TestClock.adjust("1 second")
      expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:sent`)
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))
})

describe("faults and connection lifetime", () => {
  it.scoped("dropConnection closes the live connection with a retryable reason", () =>
    Effect.gen(function*() {
      const network = yield* faults
      const alice = yield* openReady("alice")
      yield* network.dropConnection("alice")
      expect(yield* alice.nextEvent).toMatchObject({ _tag: "Closed", reason: { kind: "retry", code: "CONNECTION_LOST" } })
      yield* Deferred.await(alice.ended)
      expect(yield* network.isOnline("alice")).toBe(false)
      const error = yield* Effect.flip(alice.sendText("15550001234@c.us", "lost"))
      expect(error.code).toBe("NOT_CONNECTED")
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("a connection dropped while linking stops linking and writes no creds", () =>
    Effect.gen(function*() {
      const network = yield* faults
      const { auth, creds } = yield* makeAuth()
      const alice = yield* openSession("alice", auth)
      expect((yield* alice.nextEvent)._tag).toBe("Qr")
      yield* network.dropConnection("alice")
      expect((yield* alice.nextEvent)._tag).toBe("Closed")
      yield* TestClock.adjust("10 seconds")
      expect(yield* Ref.get(creds)).toEqual(Option.none())
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("refuseConnections makes connect fail until the time has passed", () =>
    Effect.gen(function*() {
      const network = yield* faults
      yield* network.refuseConnections("alice", "10 seconds")
      const refused = yield* Effect.flip(openSession("alice"))
      expect(refused).toMatchObject({ code: "CONNECTION_REFUSED", transient: true })
      expect(yield* network.connectionCount("alice")).toBe(0)

      yield* TestClock.adjust("10 seconds")
      yield* openReady("alice")
      expect(yield* network.connectionCount("alice")).toBe(1)
      expect(yield* network.isOnline("alice")).toBe(true)
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("a second connect replaces the first, which closes as CONNECTION_REPLACED", () =>
    Effect.gen(function*() {
      const network = yield* faults
      const first = yield* openReady("alice")
      const second = yield* openReady("alice")
      expect(yield* first.nextEvent).toMatchObject({ _tag: "Closed", reason: { kind: "fatal", code: "CONNECTION_REPLACED" } })
      yield* Deferred.await(first.ended)
      expect(yield* network.connectionCount("alice")).toBe(2)

      // The old scope closing later must not take the new connection offline.
      yield* first.goOffline
      expect(yield* network.isOnline("alice")).toBe(true)
      const bob = yield* openReady("bob")
      yield* bob.sendText(second.chatId, "to the new one")
      expect(yield* waitFor(second, "MessageReceived")).toMatchObject({ message: { text: "to the new one" } })
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("closing the connection's scope ends its event stream", () =>
    Effect.gen(function*() {
      const network = yield* faults
      const alice = yield* openReady("alice")
      yield* alice.goOffline
      yield* Deferred.await(alice.ended)
      expect(yield* network.isOnline("alice")).toBe(false)
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))
})

describe("held until the consumer takes it", () => {
  it.scoped("a message offered but not pulled is not delivered; after the line closes it arrives once on reconnect", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bobIdle = yield* openIdle("bob")
      expect((yield* bobIdle.pullOne).map((event) => event._tag)).toEqual(["Ready"])

      const { engineMessageId } = yield* alice.sendText(`${sandboxPhoneOf("bob")}@c.us`, "wait for me")
      yield* TestClock.adjust("1 minute")
      expect((yield* drained(alice)).map(statusOf)).toEqual([`${engineMessageId}:sent`])

      yield* bobIdle.goOffline // the message is still in that line's inbox, never pulled
      const bob = yield* openSession("bob")
      expect((yield* bob.nextEvent)._tag).toBe("Ready")
      expect(yield* bob.nextEvent).toMatchObject({ _tag: "MessageReceived", message: { engineMessageId, text: "wait for me" } })
      expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:delivered`)
      expect(yield* drained(bob)).toHaveLength(0)
      expect(yield* drained(alice)).toHaveLength(0)
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("`sent` receipts waiting in a row are handed over in one chunk (one transaction for the session); anything else alone", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      const alice = yield* openIdle("alice")
      expect((yield* alice.pullOne).map((event) => event._tag)).toEqual(["Ready"])
      const bob = yield* openReady("bob")
      const toNobody = (text: string) =>
        alice.connection.send({ engineMessageId: engine.newMessageId(), chatId: "447700900123@c.us", content: { type: "text", text } })
      const first = yield* toNobody("one")
      const second = yield* toNobody("two")
      yield* TestClock.adjust(Duration.millis(1)) // their `sent` receipts are in alice's inbox
      yield* bob.sendText(`${sandboxPhoneOf("alice")}@c.us`, "from bob")
      const third = yield* toNobody("three")
      yield* TestClock.adjust(Duration.millis(1))

      expect((yield* alice.pullOne).map(statusOf)).toEqual([`${first.engineMessageId}:sent`, `${second.engineMessageId}:sent`])
      expect(yield* alice.pullOne).toMatchObject([{ _tag: "MessageReceived", message: { text: "from bob" } }])
      expect((yield* alice.pullOne).map(statusOf)).toEqual([`${third.engineMessageId}:sent`])
    }).pipe(Effect.provide(sandbox({ pairDelay: "5 seconds" }))))

  it.scoped("nothing follows from a sent record before the ledger has it: sent waits for the write, and a receipt that came first waits for sent", () =>
    Effect.gen(function*() {
      const memory = makeMemoryLedger()
      const written = yield* Deferred.make<void>()
      // The network's records wait for this gate, as a slow Store would make them.
      const gated: SandboxLedger["Type"] = {
        ...memory.ledger,
        recordSent: (records) => Effect.zipRight(Deferred.await(written), memory.ledger.recordSent(records))
      }
      yield* Effect.gen(function*() {
        const alice = yield* openReady("alice")
        const bob = yield* openReady("bob")
        const { engineMessageId } = yield* alice.sendText(bob.chatId, "held back")
        // Bob takes it at once (his receipt is due) while its record is not written yet.
        expect((yield* waitFor(bob, "MessageReceived")).message.engineMessageId).toBe(engineMessageId)
        expect(yield* drained(alice)).toEqual([])
        expect(memory.sent.has(engineMessageId)).toBe(false)

        yield* Deferred.succeed(written, undefined)
        // Written: Alice hears sent, then the delivered receipt that waited for it.
        expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:sent`)
        expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:delivered`)
        expect(memory.sent.get(engineMessageId)).toMatchObject({ senderSessionId: "alice", status: "delivered" })
      }).pipe(Effect.provide(sandboxOn(gated, { pairDelay: "5 seconds" })))
    }))

  it.scoped("keeps the held row while the event waits in a Ready line's inbox, and releases it when pulled", () =>
    Effect.gen(function*() {
      const memory = makeMemoryLedger()
      yield* Effect.gen(function*() {
        const alice = yield* openReady("alice")
        const bobIdle = yield* openIdle("bob")
        yield* bobIdle.pullOne // Ready
        const { engineMessageId } = yield* alice.sendText(`${sandboxPhoneOf("bob")}@c.us`, "in the inbox")
        yield* drained(alice)
        expect(memory.heldKeys("bob")).toEqual([`msg:${engineMessageId}`])

        expect(yield* bobIdle.pullOne).toMatchObject([{ _tag: "MessageReceived", message: { engineMessageId } }])
        expect(memory.heldKeys("bob")).toEqual([])
        expect(statusOf(yield* alice.nextEvent)).toBe(`${engineMessageId}:delivered`)
        expect(memory.heldKeys("alice")).toEqual([]) // alice's consumer took her receipts too
      }).pipe(Effect.provide(sandboxOn(memory.ledger, { pairDelay: "5 seconds" })))
    }))

  it.scoped("survives a restart: held messages and owed receipts come back in order from the ledger", () =>
    Effect.gen(function*() {
      const memory = makeMemoryLedger()
      const bobChat = `${sandboxPhoneOf("bob")}@c.us`

      const ids = yield* Effect.gen(function*() {
        const alice = yield* openReady("alice")
        const bob = yield* openReady("bob")
        yield* bob.goOffline
        yield* (yield* faults).delayAcks("10 seconds")
        const sent = yield* Effect.forEach(["one", "two", "three"], (text) => alice.sendText(bobChat, text))
        yield* alice.goOffline
        yield* TestClock.adjust("10 seconds") // the `sent` receipts now wait for alice
        return sent.map(({ engineMessageId }) => engineMessageId)
      }).pipe(Effect.provide(sandboxOn(memory.ledger, { pairDelay: "5 seconds" })))

      expect(memory.heldKeys("bob")).toEqual(ids.map((id) => `msg:${id}`))
      expect(memory.heldKeys("alice")).toEqual(ids.map((id) => `status:${id}:sent`))

      // A new network on the same ledger: the gateway was restarted.
      yield* Effect.gen(function*() {
        const bob = yield* openSession("bob")
        expect((yield* bob.nextEvent)._tag).toBe("Ready")
        const received = [yield* bob.nextEvent, yield* bob.nextEvent, yield* bob.nextEvent]
        expect(received.map((event) => event._tag === "MessageReceived" && event.message.text)).toEqual(["one", "two", "three"])
        yield* drained(bob)
        expect(memory.heldKeys("bob")).toEqual([])

        const alice = yield* openSession("alice")
        expect((yield* alice.nextEvent)._tag).toBe("Ready")
        const statuses = yield* Effect.forEach(Array.from({ length: 6 }), () => alice.nextEvent)
        expect(statuses.map(statusOf)).toEqual([
          ...ids.map((id) => `${id}:sent`),
          ...ids.map((id) => `${id}:delivered`)
        ])
        expect(yield* drained(alice)).toHaveLength(0)
        expect(memory.heldKeys("alice")).toEqual([])
      }).pipe(Effect.provide(sandboxOn(memory.ledger, { pairDelay: "5 seconds" })))
    }))

  it.scoped("hands over 50 held messages in arrival order, at one ledger write each", () =>
    Effect.gen(function*() {
      const memory = makeMemoryLedger()
      yield* Effect.gen(function*() {
        const bobBefore = yield* openReady("bob")
        yield* bobBefore.goOffline
        const alice = yield* openReady("alice")
        const texts = Array.from({ length: 50 }, (_, i) => `message ${i}`)
        yield* Effect.forEach(texts, (text) => alice.sendText(bobBefore.chatId, text), { discard: true })
        expect(memory.holdWrites("bob")).toBe(50)
        expect(memory.heldKeys("bob")).toHaveLength(50)

        const bob = yield* openSession("bob")
        expect((yield* bob.nextEvent)._tag).toBe("Ready")
        const received = yield* Effect.forEach(texts, () => bob.nextEvent)
        expect(received.map((event) => event._tag === "MessageReceived" && event.message.text)).toEqual(texts)
        yield* drained(bob)
        expect(memory.heldKeys("bob")).toEqual([])
        expect(memory.holdWrites("bob")).toBe(50) // reconnecting re-offers, it does not re-hold
      }).pipe(Effect.provide(sandboxOn(memory.ledger, { pairDelay: "5 seconds" })))
    }))

  it.scoped("Engine.forget drops a session's held events and phone: a later message to it stays at sent", () =>
    Effect.gen(function*() {
      const memory = makeMemoryLedger()
      yield* Effect.gen(function*() {
        const engine = yield* Engine
        const bobBefore = yield* openReady("bob")
        const fromBob = yield* bobBefore.sendText(`${sandboxPhoneOf("carol")}@c.us`, "bob's own message")
        // Bob takes his message's `sent` before going: only what comes for him after is held.
        expect((yield* drained(bobBefore)).map(statusOf)).toEqual([`${fromBob.engineMessageId}:sent`])
        yield* bobBefore.goOffline
        const alice = yield* openReady("alice")
        const held = yield* alice.sendText(bobBefore.chatId, "held for bob")
        yield* drained(alice)
        expect(memory.heldKeys("bob")).toEqual([`msg:${held.engineMessageId}`])

        yield* engine.forget("bob")
        expect(memory.heldKeys("bob")).toEqual([])
        expect([...memory.owners.values()]).not.toContain("bob")
        expect(memory.sent.has(held.engineMessageId)).toBe(true) // alice's record stays
        expect(memory.sent.has(fromBob.engineMessageId)).toBe(false)

        const later = yield* alice.sendText(bobBefore.chatId, "anyone?")
        yield* TestClock.adjust("1 minute")
        expect((yield* drained(alice)).map(statusOf)).toEqual([`${later.engineMessageId}:sent`])

        // Coming back, the session owns its phone again but finds nothing of before.
        const bob = yield* openSession("bob")
        expect((yield* bob.nextEvent)._tag).toBe("Ready")
        expect(yield* drained(bob)).toHaveLength(0)
        expect(yield* drained(alice)).toHaveLength(0)
      }).pipe(Effect.provide(sandboxOn(memory.ledger, { pairDelay: "5 seconds" })))
    }))
})

describe("on the SQL ledger in a SQLite file", () => {

  it.effect("a restarted sandbox network finds in the file what it held, and hands it over in order", () =>
    Effect.gen(function*() {
      const file = join(mkdtempSync(join(tmpdir(), "switchboard-sandbox-")), "store.db")
      const networkOnFile = () => SandboxNetwork.layer({ pairDelay: 0 }).pipe(Layer.provide(ledgerAt(file)), Layer.provide(mediaStore()))
      const bobChat = `${sandboxPhoneOf("bob")}@c.us`
      const ids = ["SB-ONE", "SB-TWO", "SB-THREE"]

      yield* Effect.gen(function*() {
        const network = yield* SandboxNetwork
        // Bob is seen on the network once, then away.
        yield* Effect.scoped(Effect.flatMap(network.attach("bob"), (bob) => bob.becomeReady))
        const alice = yield* network.attach("alice")
        yield* alice.becomeReady
        yield* Effect.forEach(ids, (engineMessageId) => alice.send({ engineMessageId, chatId: bobChat, content: { type: "text", text: engineMessageId } }))
        // The `sent` receipts reach alice's inbox, but nobody pulls them: they stay held.
        yield* TestClock.adjust(Duration.millis(1))
      }).pipe(Effect.scoped, Effect.provide(networkOnFile()))
      expect(yield* heldRows(file, "bob")).toEqual(ids.map((id) => `msg:${id}`))
      expect(yield* heldRows(file, "alice")).toEqual(ids.map((id) => `status:${id}:sent`))

      yield* Effect.gen(function*() {
        const network = yield* SandboxNetwork
        const bob = yield* network.attach("bob")
        yield* bob.becomeReady
        const toBob = yield* streamOfEvents(bob.takeEvents, bob.acknowledge).pipe(Stream.take(1 + ids.length), Stream.runCollect)
        expect(Chunk.toReadonlyArray(toBob).map((event) => event._tag === "MessageReceived" ? event.message.text : event._tag))
          .toEqual(["Ready", ...ids])
        const alice = yield* network.attach("alice")
        yield* alice.becomeReady
        const toAlice = yield* streamOfEvents(alice.takeEvents, alice.acknowledge).pipe(Stream.take(1 + 2 * ids.length), Stream.runCollect)
        expect(Chunk.toReadonlyArray(toAlice).map((event) =>
          event._tag === "MessageStatusChanged" ? `${event.engineMessageId}:${event.status}` : event._tag
        )).toEqual(["Ready", ...ids.map((id) => `${id}:sent`), ...ids.map((id) => `${id}:delivered`)])
      }).pipe(Effect.scoped, Effect.provide(networkOnFile()))
      expect(yield* heldRows(file, "bob")).toEqual([])
      expect(yield* heldRows(file, "alice")).toEqual([])
    }))

  it.effect("a `sent` receipt waiting on a Ready line has no row of its own, yet a network killed before it was taken hands it again when the message is sent again", () =>
    Effect.gen(function*() {
      const file = join(mkdtempSync(join(tmpdir(), "switchboard-sandbox-")), "store.db")
      const networkOnFile = () => SandboxNetwork.layer({ pairDelay: 0 }).pipe(Layer.provide(ledgerAt(file)), Layer.provide(mediaStore()))
      const command = { engineMessageId: "SB-UNHEARD", chatId: "447700900123@c.us", content: { type: "text" as const, text: "to nobody" } }

      // The first process is killed, not shut down: its scope never closes, so nothing more is written.
      const killed = yield* Scope.make()
      const first = yield* Layer.buildWithScope(networkOnFile(), killed)
      yield* Effect.gen(function*() {
        const network = yield* SandboxNetwork
        const alice = yield* network.attach("alice").pipe(Scope.extend(killed))
        yield* alice.becomeReady
        yield* alice.send(command)
        yield* TestClock.adjust(Duration.millis(1)) // the `sent` receipt is in alice's inbox, not taken
      }).pipe(Effect.provide(first))
      expect(yield* heldRows(file, "alice")).toEqual([])

      // The restarted gateway still has the message pending, so it sends it again.
      yield* Effect.gen(function*() {
        const network = yield* SandboxNetwork
        const alice = yield* network.attach("alice")
        yield* alice.becomeReady
        yield* alice.send(command)
        yield* TestClock.adjust(Duration.millis(1))
        const toAlice = yield* streamOfEvents(alice.takeEvents, alice.acknowledge).pipe(Stream.take(2), Stream.runCollect)
        expect(Chunk.toReadonlyArray(toAlice).map((event) =>
          event._tag === "MessageStatusChanged" ? `${event.engineMessageId}:${event.status}` : event._tag
        )).toEqual(["Ready", "SB-UNHEARD:sent"])
      }).pipe(Effect.scoped, Effect.provide(networkOnFile()))
    }))
})
