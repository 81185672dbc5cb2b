import { afterAll, beforeAll, describe, expect, it, vi } from "@effect/vitest"
import { defaultSessionSettings } from "../src/domain/SessionSettings.js"
import { decryptPollVote, proto } from "@whiskeysockets/baileys"
import { randomBytes } from "node:crypto"
import { Effect, Exit, ManagedRuntime, Option, Scope, Stream } from "effect"
import { createServer } from "node:net"
import { type AuthState, Engine, type EngineConnection, type EngineError, type EngineEvent } from "../src/runtime/Engine.js"
import type { GroupChange } from "../src/runtime/EngineDirectory.js"
import type { StoredPoll } from "../src/runtime/EngineMessageActions.js"
import { encryptPollVote, optionHashOf } from "../src/runtime/engines/baileys/polls.js"
import { BaileysEngineLive, meOf } from "../src/runtime/engines/baileys/BaileysEngine.js"
import type { Group } from "../src/domain/Group.js"
import { type ReceivedMessage, startWaPeer, type WaPeer } from "./support/wa-peer/index.js"
import { muteSignalChatter } from "./support/wa-peer/raw-client.js"
import { memoryAuth as peerAuth } from "./support/baileysEngineLink.js"

const memoryAuth = (): AuthState & { readonly written: Array<unknown> } => {
  const written: Array<unknown> = []
  return {
    written,
    readCreds: Effect.succeed(Option.none()),
    writeCreds: (creds) => Effect.sync(() => void written.push(creds)),
    getKeys: () => Effect.succeed({}),
    setKeys: () => Effect.void,
    clear: Effect.void
  }
}

/** The same, until `goDown`: from then on every write dies, as the Store's do when it is gone. */
const failingPeerAuth = () => {
  const auth = peerAuth()
  let down = false
  const dies = Effect.dieMessage("the store is down")
  return {
    auth: {
      ...auth,
      writeCreds: (creds: unknown) => down ? dies : auth.writeCreds(creds),
      setKeys: (changes: Parameters<AuthState["setKeys"]>[0]) => down ? dies : auth.setKeys(changes)
    } satisfies AuthState,
    goDown: () => void (down = true)
  }
}

/** A port on 127.0.0.1 that nothing listens on (taken, then released). */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
)

describe("BaileysEngine (no peer)", () => {
  it.effect("is named baileys and mints ids in WhatsApp's own format", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      expect(engine.name).toBe("baileys")
      const ids = new Set(Array.from({ length: 50 }, () => engine.newMessageId()))
      expect(ids.size).toBe(50)
      for (const id of ids) expect(id).toMatch(/^3EB0[0-9A-F]{18}$/)
      yield* engine.forget("any")
    }).pipe(Effect.provide(BaileysEngineLive())))

  it.scoped("an unusable proxy URL fails connect, not transient, without the password", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      const error = yield* Effect.flip(engine.connect({
        sessionId: "s1",
        auth: memoryAuth(),
        lookupSent: () => Effect.succeed(Option.none()), lookupPoll: () => Effect.succeed(Option.none()), settings: defaultSessionSettings("off"),
        proxyUrl: Option.some("ftp://user:topsecret@proxy.example:21")
      }))
      expect(error).toMatchObject({ code: "INVALID_PROXY", transient: false })
      expect(error.message).not.toContain("topsecret")
    }).pipe(Effect.provide(BaileysEngineLive())))

  it.scoped("a refused websocket ends the event stream with a retryable Closed", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const engine = yield* Effect.provide(Engine, BaileysEngineLive({ waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat` }))
      const connection = yield* engine.connect({
        sessionId: "s2",
        auth: memoryAuth(),
        lookupSent: () => Effect.succeed(Option.none()), lookupPoll: () => Effect.succeed(Option.none()), settings: defaultSessionSettings("off"),
        proxyUrl: Option.none()
      })
      const events = yield* Stream.runCollect(connection.events).pipe(Effect.timeout("10 seconds"))
      const tags = [...events].map((event: EngineEvent) => event._tag)
      expect(tags.at(-1)).toBe("Closed")
      const closed = [...events].at(-1)
      expect(closed?._tag === "Closed" && closed.reason).toMatchObject({ kind: "retry", code: "CONNECTION_LOST" })
    }), 15_000)

  it("reads the account from creds.me", () => {
    expect(meOf({ id: "15551234567:12@s.whatsapp.net", lid: "99887766554433:12@lid", name: "Alice" })).toEqual({
      id: "15551234567@c.us",
      phone: "15551234567",
      lid: "99887766554433@lid",
      pushName: "Alice"
    })
    expect(meOf({ id: "15551234567@s.whatsapp.net" })).toEqual({ id: "15551234567@c.us", phone: "15551234567", lid: null, pushName: null })
    expect(meOf(undefined)).toBeNull()
  })
})

/**
 * The engine's directory (groups, contacts, labels) and issue 17's message kinds end to end
 * against the loopback WhatsApp Web peer, at the engine boundary: the connection's operations
 * and events, with the real Baileys client underneath. (Channels and labels beyond the business check need `w:mex` and
 * app-state on the peer: those are proven at the socket boundary in baileys-directory.test.ts.)
 */
describe("BaileysEngine against the loopback peer: groups, contacts, labels, message kinds", () => {
  const ALICE = "15551230001"
  const BOB = "15551230002"
  const CAROL = "15551230003"
  const DAVE = "15551230004"
  const ERIN = "15551230005"
  const UNKNOWN = "15559999999"

  let peer: WaPeer
  let runtime: ManagedRuntime.ManagedRuntime<Engine, never>
  let alice: Linked
  let unmute: () => void
  const scopes: Array<Scope.CloseableScope> = []
  /** The polls the Store would hold, by id (what `lookupPoll` answers). */
  const polls = new Map<string, StoredPoll>()

  /** A live engine connection, the scope it lives in, and every event it reported so far. */
  interface Linked {
    readonly connection: EngineConnection
    readonly scope: Scope.CloseableScope
    readonly events: Array<EngineEvent>
  }

  const open = async (auth: AuthState): Promise<Linked> => {
    const scope = await Effect.runPromise(Scope.make())
    scopes.push(scope)
    const engine = await runtime.runPromise(Engine)
    const connection = await Effect.runPromise(Scope.extend(
      engine.connect({ sessionId: "peer", auth, lookupSent: () => Effect.succeed(Option.none()), lookupPoll: (id) => Effect.succeed(Option.fromNullable(polls.get(id))), proxyUrl: Option.none(), settings: defaultSessionSettings("off") }),
      scope
    ))
    const events: Array<EngineEvent> = []
    Effect.runFork(Stream.runForEach(connection.events, (event) => Effect.sync(() => void events.push(event))))
    return { connection, scope, events }
  }

  /** The first event (of all reported so far, or yet to come) matching `predicate`. */
  const event = async <T extends EngineEvent["_tag"]>(
    linked: Linked,
    tag: T,
    predicate: (event: Extract<EngineEvent, { _tag: T }>) => boolean = () => true,
    timeoutMs = 10_000
  ): Promise<Extract<EngineEvent, { _tag: T }>> => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = linked.events.find((e): e is Extract<EngineEvent, { _tag: T }> => e._tag === tag && predicate(e as never))
      if (found) return found
      if (Date.now() > deadline) throw new Error(`no ${tag} event matching within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const groupChange = (linked: Linked, predicate: (change: GroupChange) => boolean) =>
    event(linked, "GroupChanged", (e) => predicate(e.change)).then((e) => e.change)

  /** QR → the phone scans → 515 → a new connection → Ready. */
  const link = async (phone: string, platform?: string, auth: AuthState = peerAuth()): Promise<Linked> => {
    const first = await open(auth)
    const { qr } = await event(first, "Qr")
    await peer.scan(qr, { phone, ...(platform === undefined ? {} : { platform }) })
    await event(first, "Closed", (e) => e.reason.kind === "restart")
    const linked = await open(auth)
    await event(linked, "Ready")
    return linked
  }

  const run = <A>(effect: Effect.Effect<A, EngineError>) => runtime.runPromise(effect)
  const refusal = (effect: Effect.Effect<unknown, EngineError>) =>
    runtime.runPromise(Effect.flip(effect)).then(({ code, refusal, transient }) => ({ code, refusal, transient }))
  const lidOf = (phone: string) => `${peer.member(phone).kind === "contact" ? peer.contact(phone).lidUser : peer.accounts.get(phone)!.lidUser}@lid`

  let team: Group

  beforeAll(async () => {
    unmute = muteSignalChatter()
    peer = await startWaPeer()
    runtime = ManagedRuntime.make(BaileysEngineLive({ waWebSocketUrl: peer.url, mediaCa: peer.mediaCa }))
    peer.contact(BOB, { name: "Bob" })
    peer.contact(CAROL, { name: "Carol" })
    alice = await link(ALICE)
  }, 30_000)

  afterAll(async () => {
    for (const scope of scopes.reverse()) await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime?.dispose()
    await peer?.close()
    unmute?.()
  })

  it("contacts.check: who is on WhatsApp, with the chat id and the LID", async () => {
    expect(await run(alice.connection.contacts.check([BOB, UNKNOWN]))).toEqual([
      { number: BOB, exists: true, chatId: `${BOB}@c.us`, lid: lidOf(BOB) },
      { number: UNKNOWN, exists: false, chatId: null, lid: null }
    ])
  })

  it("groups.create: the group with phone ids and roles; the join event; the members seen with both ids", async () => {
    team = await run(alice.connection.groups.create("Team", [`${BOB}@c.us`]))
    expect(team).toMatchObject({
      id: expect.stringMatching(/^120363\d+@g\.us$/),
      subject: "Team",
      description: null,
      owner: `${ALICE}@c.us`,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      announce: false,
      restrict: false
    })
    expect(team.participants).toEqual(expect.arrayContaining([
      { id: `${ALICE}@c.us`, role: "superadmin" },
      { id: `${BOB}@c.us`, role: "member" }
    ]))
    const joined = await groupChange(alice, (c) => c.kind === "join" && c.groupId === team.id)
    expect(joined).toMatchObject({ group: { subject: "Team" }, by: `${ALICE}@c.us` })
    const seen = await event(alice, "ContactsSeen", (e) => e.contacts.some((c) => c.phone === `${BOB}@c.us`))
    expect(seen.contacts).toContainEqual({ phone: `${BOB}@c.us`, lid: lidOf(BOB), name: null })
  })

  it("groups.get and groups.list read it back", async () => {
    expect(await run(alice.connection.groups.get(team.id))).toMatchObject({ id: team.id, subject: "Team" })
    expect((await run(alice.connection.groups.list)).map((g) => g.id)).toEqual([team.id])
  })

  it("participants: a status per person, and the participants events by the account", async () => {
    const results = await run(alice.connection.groups.updateParticipants(team.id, [`${CAROL}@c.us`, `${UNKNOWN}@c.us`], "add"))
    expect(results).toEqual([
      { id: `${CAROL}@c.us`, status: 200, ok: true },
      { id: `${UNKNOWN}@c.us`, status: 404, ok: false }
    ])
    expect(await groupChange(alice, (c) => c.kind === "participants" && c.action === "add")).toMatchObject({
      groupId: team.id,
      participants: [`${CAROL}@c.us`],
      by: `${ALICE}@c.us`
    })
    await run(alice.connection.groups.updateParticipants(team.id, [`${CAROL}@c.us`], "promote"))
    await groupChange(alice, (c) => c.kind === "participants" && c.action === "promote" && c.participants?.[0] === `${CAROL}@c.us`)
    expect((await run(alice.connection.groups.get(team.id))).participants).toContainEqual({ id: `${CAROL}@c.us`, role: "admin" })
  })

  it("subject and description: changed, and reported as updates", async () => {
    await run(alice.connection.groups.setSubject(team.id, "Team A"))
    await run(alice.connection.groups.setDescription(team.id, "What we do"))
    expect(await groupChange(alice, (c) => c.kind === "update" && c.update?.subject === "Team A")).toMatchObject({ by: `${ALICE}@c.us` })
    await groupChange(alice, (c) => c.kind === "update" && c.update?.description === "What we do")
    expect(await run(alice.connection.groups.get(team.id))).toMatchObject({ subject: "Team A", description: "What we do" })
  })

  it("invite codes: read and revoked", async () => {
    const code = await run(alice.connection.groups.inviteCode(team.id))
    const fresh = await run(alice.connection.groups.revokeInvite(team.id))
    expect(code).toMatch(/^[A-Za-z0-9]{22}$/)
    expect(fresh).not.toBe(code)
    expect(peer.group(team.id)?.inviteCode).toBe(fresh)
  })

  it("a text to the group: every member decrypts it; later sends use the cached metadata", async () => {
    const engine = await runtime.runPromise(Engine)
    const send = async (text: string) => {
      const decrypted = Promise.all([BOB, CAROL].map((phone) =>
        peer.waitFor<ReceivedMessage>("received", (m) => m.group === team.id && m.to === phone && m.text === text, 10_000)))
      await run(alice.connection.send({ engineMessageId: engine.newMessageId(), chatId: team.id, content: { type: "text", text } }))
      return decrypted
    }
    await send("hello team")
    const metadataQueries = () => peer.groups.queries.filter((q) => q.op === "query" && q.to === team.id).length
    const before = metadataQueries()
    await send("second")
    await send("third")
    expect(metadataQueries()).toBe(before)
    expect(peer.errors).toEqual([])
  })

  it("a member's group message arrives under the group, from the member's phone id", async () => {
    const id = await peer.contact(BOB).sendToGroup(team.id, "hi team")
    const received = await event(alice, "MessageReceived", (e) => e.message.engineMessageId === id)
    expect(received.message).toMatchObject({
      chatId: team.id,
      from: `${BOB}@c.us`,
      fromPhone: `${BOB}@c.us`,
      fromLid: lidOf(BOB),
      type: "text",
      text: "hi team"
    })
    // the group's notifications (create, add, subject…) reach Baileys as stub messages: none is a chat message
    expect(alice.events.filter((e) => e._tag === "MessageReceived" && e.message.chatId === team.id)).toHaveLength(1)
  })

  it("someone else's group: joined with the group, refusals for what only admins may do, settings, removal", async () => {
    const bob = peer.member(BOB)
    const plans = peer.groups.create(bob, "Bob's plans", [peer.member(ALICE)])
    expect(await groupChange(alice, (c) => c.kind === "join" && c.groupId === plans.jid)).toMatchObject({
      group: { subject: "Bob's plans", owner: `${BOB}@c.us` },
      by: `${BOB}@c.us`
    })
    expect(await refusal(alice.connection.groups.updateParticipants(plans.jid, [`${BOB}@c.us`], "remove")))
      .toEqual({ code: "NOT_GROUP_ADMIN", refusal: "forbidden", transient: false })
    expect(await refusal(alice.connection.groups.inviteCode(plans.jid)))
      .toEqual({ code: "NOT_GROUP_ADMIN", refusal: "forbidden", transient: false })
    peer.groups.setSettings(plans, bob, { announce: true })
    expect(await groupChange(alice, (c) => c.kind === "update" && c.groupId === plans.jid)).toMatchObject({
      update: { announce: true },
      by: `${BOB}@c.us`
    })
    peer.groups.updateParticipants(plans, bob, "remove", [{ jid: `${ALICE}@s.whatsapp.net`, entity: peer.member(ALICE) }])
    expect(await groupChange(alice, (c) => c.kind === "leave" && c.groupId === plans.jid)).toMatchObject({ by: `${BOB}@c.us` })
    expect(await refusal(alice.connection.groups.get(plans.jid))).toEqual({ code: "NOT_GROUP_MEMBER", refusal: "forbidden", transient: false })
  })

  it("join by invite code; unknown groups and codes are not found; leave", async () => {
    const bob = peer.member(BOB)
    const open = peer.groups.create(bob, "Open house", [])
    const groupId = await run(alice.connection.groups.join(peer.groups.inviteCode(open, bob)))
    expect(groupId).toBe(open.jid)
    expect(await groupChange(alice, (c) => c.kind === "join" && c.groupId === open.jid)).toMatchObject({
      group: { subject: "Open house", participants: expect.arrayContaining([{ id: `${ALICE}@c.us`, role: "member" }]) }
    })
    expect(await refusal(alice.connection.groups.join("NoSuchCode123"))).toMatchObject({ code: "INVITE_NOT_FOUND", refusal: "not_found" })
    expect(await refusal(alice.connection.groups.get("120363000000000000@g.us"))).toMatchObject({ code: "GROUP_NOT_FOUND", refusal: "not_found" })
    await run(alice.connection.groups.leave(open.jid))
    expect(await groupChange(alice, (c) => c.kind === "leave" && c.groupId === open.jid)).toMatchObject({ by: `${ALICE}@c.us` })
    expect((await run(alice.connection.groups.list)).map((g) => g.id)).not.toContain(open.jid)
  })

  it("labels: a consumer account is refused; a business one needs the phone's app-state keys first", async () => {
    expect(await refusal(alice.connection.labels.create("VIP", 1))).toEqual({ code: "APP_STATE_NOT_READY", refusal: "conflict", transient: true })
    const dave = await link(DAVE, "android")
    expect(await refusal(dave.connection.labels.create("VIP", 1))).toEqual({ code: "NOT_A_BUSINESS_ACCOUNT", refusal: "conflict", transient: false })
    expect(await refusal(dave.connection.labels.addToChat(`${BOB}@c.us`, "1"))).toMatchObject({ code: "NOT_A_BUSINESS_ACCOUNT" })
  })

  it("closing a connection ends its socket even when the Store cannot take the last save of the credentials", async () => {
    const store = failingPeerAuth()
    const erin = await link(ERIN, undefined, store.auth)
    expect(peer.openLogins(ERIN)).toHaveLength(1)
    store.goDown()
    const closed = await Effect.runPromise(Effect.exit(Scope.close(erin.scope, Exit.void)))
    await vi.waitFor(() => expect(peer.openLogins(ERIN)).toEqual([]), { timeout: 5_000 })
    expect(Exit.isSuccess(closed)).toBe(true)
  })

  describe("issue 17's message kinds", () => {
    const BOB_CHAT = `${BOB}@c.us`
    const mine = (engineMessageId: string) => ({ engineMessageId, fromMe: true, from: `${ALICE}@c.us` })
    const decrypted = (predicate: (m: ReceivedMessage) => boolean) => peer.waitFor<ReceivedMessage>("received", (m) => m.to === BOB && predicate(m))
    const send = (engineMessageId: string, content: Parameters<EngineConnection["send"]>[0]["content"], forwarded = false) =>
      run(alice.connection.send({ engineMessageId, chatId: BOB_CHAT, content, forwarded })).then(() => decrypted((m) => m.id === engineMessageId))

    it("a location (forwarded), a poll with the gateway's secret and a text with its preview reach the contact's phone", async () => {
      const location = await send("3EB0K17LOC", { type: "location", location: { latitude: 1.5, longitude: 2.5, name: "Here", address: null, url: null } }, true)
      expect(location.message.locationMessage).toMatchObject({ degreesLatitude: 1.5, degreesLongitude: 2.5, name: "Here", contextInfo: { isForwarded: true } })
      const secret = new Uint8Array(randomBytes(32))
      const poll = await send("3EB0K17POLL", { type: "poll", poll: { name: "Lunch?", options: ["Pizza", "Sushi"], selectableCount: 1, secret } })
      expect(poll.message.pollCreationMessageV3?.options?.map((o) => o.optionName)).toEqual(["Pizza", "Sushi"])
      expect(Buffer.from(poll.message.messageContextInfo!.messageSecret!)).toEqual(Buffer.from(secret))
      const text = await send("3EB0K17TXT", {
        type: "text",
        text: "see https://example.com/x",
        linkPreview: { url: "https://example.com/x", title: "X", description: "about x", thumbnail: null }
      })
      expect(text.message.extendedTextMessage).toMatchObject({ matchedText: "https://example.com/x", title: "X", description: "about x" })
    })

    it("an edit (text and caption), a revoke and a pin reach the contact's phone naming the message", async () => {
      const { MESSAGE_EDIT, REVOKE } = proto.Message.ProtocolMessage.Type
      await run(alice.connection.messages.edit({ chatId: BOB_CHAT, target: mine("3EB0K17TXT"), type: "text", text: "edited" }))
      const edit = await decrypted((m) => m.message.protocolMessage?.type === MESSAGE_EDIT && m.message.protocolMessage.key?.id === "3EB0K17TXT")
      expect(edit.message.protocolMessage?.editedMessage?.extendedTextMessage?.text).toBe("edited")
      await run(alice.connection.messages.edit({ chatId: BOB_CHAT, target: mine("3EB0K17IMG"), type: "image", text: "new caption" }))
      const caption = await decrypted((m) => m.message.protocolMessage?.key?.id === "3EB0K17IMG")
      expect(caption.message.protocolMessage).toMatchObject({ type: MESSAGE_EDIT, editedMessage: { imageMessage: { caption: "new caption" } } })
      await run(alice.connection.messages.pin({ chatId: BOB_CHAT, target: mine("3EB0K17TXT"), pinned: true, durationSeconds: 86400 }))
      const pin = await decrypted((m) => m.message.pinInChatMessage != null)
      expect(pin.message.pinInChatMessage).toMatchObject({ type: proto.Message.PinInChatMessage.Type.PIN_FOR_ALL, key: { id: "3EB0K17TXT", fromMe: true } })
      await run(alice.connection.messages.revoke(BOB_CHAT, mine("3EB0K17TXT")))
      const revoke = await decrypted((m) => m.message.protocolMessage?.type === REVOKE)
      expect(revoke.message.protocolMessage?.key).toMatchObject({ id: "3EB0K17TXT", fromMe: true })
    })

    it("polls both ways: the contact's poll is voted on (the phone decrypts the vote), the contact's vote is decrypted", async () => {
      const bobsSecret = randomBytes(32)
      const bobsPoll = await peer.contact(BOB).sendMessage(ALICE, {
        pollCreationMessage: { name: "Where?", options: [{ optionName: "Park" }, { optionName: "Beach" }], selectableOptionsCount: 0 },
        messageContextInfo: { messageSecret: bobsSecret }
      })
      const received = await event(alice, "MessageReceived", (e) => e.message.engineMessageId === bobsPoll)
      expect(received.message).toMatchObject({ type: "poll", poll: { name: "Where?", options: ["Park", "Beach"], selectableCount: 0 } })
      expect(Buffer.from(received.message.poll!.secret!)).toEqual(bobsSecret)
      await run(alice.connection.messages.votePoll({
        chatId: BOB_CHAT,
        target: { engineMessageId: bobsPoll, fromMe: false, from: BOB_CHAT },
        poll: received.message.poll!,
        options: ["Beach"]
      }))
      const vote = await decrypted((m) => m.message.pollUpdateMessage?.pollCreationMessageKey?.id === bobsPoll)
      const choice = decryptPollVote(vote.message.pollUpdateMessage!.vote!, {
        pollEncKey: bobsSecret,
        pollMsgId: bobsPoll,
        pollCreatorJid: `${BOB}@s.whatsapp.net`,
        voterJid: `${ALICE}@s.whatsapp.net`
      })
      expect(choice.selectedOptions.map((hash) => Buffer.from(hash))).toEqual([optionHashOf("Beach")])

      const secret = new Uint8Array(randomBytes(32))
      polls.set("3EB0K17POLL", { name: "Lunch?", options: ["Pizza", "Sushi"], selectableCount: 1, secret, chatId: BOB_CHAT, fromMe: true, from: `${ALICE}@c.us` })
      await peer.contact(BOB).sendMessage(ALICE, {
        pollUpdateMessage: {
          pollCreationMessageKey: { remoteJid: `${ALICE}@s.whatsapp.net`, fromMe: false, id: "3EB0K17POLL" },
          vote: encryptPollVote(secret, { pollId: "3EB0K17POLL", creatorJid: `${ALICE}@s.whatsapp.net`, voterJid: `${BOB}@s.whatsapp.net` }, ["Sushi"]),
          senderTimestampMs: Date.now()
        }
      })
      expect((await event(alice, "PollVoteReceived")).vote).toMatchObject({ chatId: BOB_CHAT, voter: BOB_CHAT, targetEngineMessageId: "3EB0K17POLL", options: ["Sushi"] })
    })

    it("a star is app state: refused as not ready while the phone has not shared its app-state keys", async () => {
      expect(await refusal(alice.connection.messages.star(BOB_CHAT, mine("3EB0K17LOC"), true)))
        .toEqual({ code: "APP_STATE_NOT_READY", refusal: "conflict", transient: true })
    })

    it("the contact's edit and revoke reach the engine as MessageEdited and MessageRevoked", async () => {
      const { MESSAGE_EDIT, REVOKE } = proto.Message.ProtocolMessage.Type
      const id = await peer.contact(BOB).send(ALICE, "tpyo")
      await event(alice, "MessageReceived", (e) => e.message.engineMessageId === id)
      const key = { remoteJid: `${ALICE}@s.whatsapp.net`, fromMe: true, id }
      await peer.contact(BOB).sendMessage(ALICE, { protocolMessage: { type: MESSAGE_EDIT, key, editedMessage: { conversation: "typo" }, timestampMs: Date.now() } })
      expect((await event(alice, "MessageEdited", (e) => e.edit.targetEngineMessageId === id)).edit).toMatchObject({ from: BOB_CHAT, text: "typo" })
      await peer.contact(BOB).sendMessage(ALICE, { protocolMessage: { type: REVOKE, key } })
      expect((await event(alice, "MessageRevoked", (e) => e.revoke.targetEngineMessageId === id)).revoke).toMatchObject({ chatId: BOB_CHAT, from: BOB_CHAT })
      // neither is a message of its own
      expect(alice.events.filter((e) => e._tag === "MessageReceived" && e.message.from === BOB_CHAT && e.message.type === "unknown")).toEqual([])
    })
  })
})
