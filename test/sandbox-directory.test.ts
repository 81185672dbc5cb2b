import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Engine, type EngineError } from "../src/runtime/Engine.js"
import type { GroupChange, LabelChange } from "../src/runtime/EngineDirectory.js"
import { SandboxNetwork, sandboxPhoneOf } from "../src/runtime/engines/sandbox/SandboxNetwork.js"
import { drained, openReady, sandbox, sandboxOnFile, type TestSession } from "./support/sandboxSessions.js"
import { heldRows } from "./support/sqlLedger.js"

const groupChanges = (session: TestSession) =>
  Effect.map(drained(session), (events) => events.flatMap((event) => event._tag === "GroupChanged" ? [event.change] : []))

const labelChanges = (session: TestSession) =>
  Effect.map(drained(session), (events) => events.flatMap((event) => event._tag === "LabelChanged" ? [event.change] : []))

const statuses = (session: TestSession) =>
  Effect.map(drained(session), (events) => events.flatMap((event) => event._tag === "MessageStatusChanged" ? [event.status] : []))

const received = (session: TestSession) =>
  Effect.map(drained(session), (events) => events.flatMap((event) => event._tag === "MessageReceived" ? [event.message] : []))

/** The refusal of a failed operation: its code and how the API answers it. */
const refusalOf = <A>(effect: Effect.Effect<A, EngineError>) =>
  Effect.map(Effect.flip(effect), ({ code, refusal }) => ({ code, refusal }))

const roles = (group: { readonly participants: ReadonlyArray<{ readonly id: string; readonly role: string }> }) =>
  Object.fromEntries(group.participants.map(({ id, role }) => [id, role]))

const summary = (change: GroupChange) => [change.kind, change.action ?? null, change.participants ?? null, change.by ?? null]

const echo = "15550001234@c.us"
const stranger = "4915112345678@c.us"
const setBusiness = (sessionId: string, business: boolean) => Effect.flatMap(SandboxNetwork, (network) => network.setBusiness(sessionId, business))

/** Alice, bob and carol, and a group of the three made by alice; everyone has drained the `join`. */
const trio = Effect.gen(function*() {
  const [alice, bob, carol] = yield* Effect.forEach(["alice", "bob", "carol"], (name) => openReady(name))
  const group = yield* alice.groups.create("Team", [bob!.chatId, carol!.chatId])
  yield* Effect.forEach([alice!, bob!, carol!], drained)
  return { alice: alice!, bob: bob!, carol: carol!, group }
})

// --- groups --------------------------------------------------------------------------------

describe("sandbox groups", () => {
  it.scoped("create: the creator is superadmin, people who exist are members, everyone in it hears `join`", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const group = yield* alice.groups.create("Team", [bob.chatId, echo, stranger, alice.chatId, bob.chatId])
      expect(group.id).toMatch(/^1203630\d{11}@g\.us$/)
      expect(group).toMatchObject({
        subject: "Team",
        description: null,
        owner: alice.chatId,
        createdAt: new Date(0).toISOString(),
        announce: false,
        restrict: false
      })
      expect(group.participants).toEqual([
        { id: alice.chatId, role: "superadmin" },
        { id: bob.chatId, role: "member" },
        { id: echo, role: "member" }
      ])
      for (const session of [alice, bob]) {
        const [change] = yield* groupChanges(session)
        expect(change).toEqual({ kind: "join", groupId: group.id, group, by: alice.chatId })
      }
      expect(yield* bob.groups.get(group.id)).toEqual(group)
      expect(yield* bob.groups.list).toEqual([group])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("a session's lid names it as a participant", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const [check] = yield* alice.contacts.check([sandboxPhoneOf("bob")])
      const group = yield* alice.groups.create("By lid", [check!.lid!])
      expect(roles(group)[bob.chatId]).toBe("member")
    }).pipe(Effect.provide(sandbox())))

  it.scoped("a group the session is not in, or that does not exist, is GROUP_NOT_FOUND", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const dave = yield* openReady("dave")
      const group = yield* alice.groups.create("Private", [echo])
      const notFound = { code: "GROUP_NOT_FOUND", refusal: "not_found" }
      expect(yield* refusalOf(dave.groups.get(group.id))).toEqual(notFound)
      expect(yield* refusalOf(dave.groups.leave(group.id))).toEqual(notFound)
      expect(yield* refusalOf(dave.groups.setSubject(group.id, "mine"))).toEqual(notFound)
      expect(yield* refusalOf(alice.groups.get("120363000000000000@g.us"))).toEqual(notFound)
      expect(yield* dave.groups.list).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("participants: add answers per person; only admins may change them (NOT_GROUP_ADMIN)", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const carol = yield* openReady("carol")
      const group = yield* alice.groups.create("Team", [bob.chatId])
      yield* Effect.forEach([alice, bob], drained)

      const forbidden = { code: "NOT_GROUP_ADMIN", refusal: "forbidden" }
      expect(yield* refusalOf(bob.groups.updateParticipants(group.id, [carol.chatId], "add"))).toEqual(forbidden)

      const results = yield* alice.groups.updateParticipants(group.id, [carol.chatId, bob.chatId, stranger], "add")
      expect(results).toEqual([
        { id: carol.chatId, status: 200, ok: true },
        { id: bob.chatId, status: 409, ok: false },
        { id: stranger, status: 404, ok: false }
      ])
      const [toCarol] = yield* groupChanges(carol)
      expect(toCarol).toMatchObject({ kind: "join", groupId: group.id, by: alice.chatId })
      expect(roles(toCarol!.group!)).toEqual({ [alice.chatId]: "superadmin", [bob.chatId]: "member", [carol.chatId]: "member" })
      for (const session of [alice, bob]) {
        expect((yield* groupChanges(session)).map(summary)).toEqual([["participants", "add", [carol.chatId], alice.chatId]])
      }
    }).pipe(Effect.provide(sandbox())))

  it.scoped("promote, demote and remove; the creator can be neither demoted nor removed by others", () =>
    Effect.gen(function*() {
      const { alice, bob, carol, group } = yield* trio
      expect(yield* alice.groups.updateParticipants(group.id, [bob.chatId], "promote")).toEqual([{ id: bob.chatId, status: 200, ok: true }])
      for (const session of [alice, bob, carol]) {
        const [change] = yield* groupChanges(session)
        expect(summary(change!)).toEqual(["participants", "promote", [bob.chatId], alice.chatId])
        expect(roles(change!.group!)[bob.chatId]).toBe("admin")
      }
      // Bob is an admin now, but the creator is out of his reach.
      expect(yield* bob.groups.updateParticipants(group.id, [alice.chatId], "demote")).toEqual([{ id: alice.chatId, status: 403, ok: false }])
      expect(yield* bob.groups.updateParticipants(group.id, [alice.chatId], "remove")).toEqual([{ id: alice.chatId, status: 403, ok: false }])
      expect(yield* bob.groups.updateParticipants(group.id, [stranger], "promote")).toEqual([{ id: stranger, status: 404, ok: false }])
      expect(yield* groupChanges(alice)).toEqual([]) // nothing changed, nobody hears anything

      yield* bob.groups.updateParticipants(group.id, [carol.chatId], "remove")
      expect(yield* groupChanges(carol)).toEqual([{ kind: "leave", groupId: group.id, by: bob.chatId }])
      expect(yield* refusalOf(carol.groups.get(group.id))).toMatchObject({ code: "GROUP_NOT_FOUND" })
      for (const session of [alice, bob]) {
        expect((yield* groupChanges(session)).map(summary)).toEqual([["participants", "remove", [carol.chatId], bob.chatId]])
      }

      yield* alice.groups.updateParticipants(group.id, [bob.chatId], "demote")
      expect(roles(yield* alice.groups.get(group.id))).toEqual({ [alice.chatId]: "superadmin", [bob.chatId]: "member" })
      expect(yield* refusalOf(bob.groups.updateParticipants(group.id, [alice.chatId], "demote"))).toMatchObject({ code: "NOT_GROUP_ADMIN" })
    }).pipe(Effect.provide(sandbox())))

  it.scoped("subject and description: admins edit, every member hears `update`", () =>
    Effect.gen(function*() {
      const { alice, bob, carol, group } = yield* trio
      yield* alice.groups.setSubject(group.id, "Renamed")
      yield* alice.groups.setDescription(group.id, "What we do")
      for (const session of [alice, bob, carol]) {
        const changes = yield* groupChanges(session)
        expect(changes.map((change) => change.update)).toEqual([{ subject: "Renamed" }, { description: "What we do" }])
        expect(changes[1]!.group).toMatchObject({ subject: "Renamed", description: "What we do" })
      }
      yield* alice.groups.setDescription(group.id, "")
      expect((yield* alice.groups.get(group.id)).description).toBeNull()
      expect((yield* groupChanges(bob)).map((change) => change.update)).toEqual([{ description: null }])

      const forbidden = { code: "NOT_GROUP_ADMIN", refusal: "forbidden" }
      expect(yield* refusalOf(bob.groups.setSubject(group.id, "Mine"))).toEqual(forbidden)
      expect(yield* refusalOf(bob.groups.setDescription(group.id, "Mine"))).toEqual(forbidden)
    }).pipe(Effect.provide(sandbox())))

  it.scoped("invite codes: admins get and revoke them; joining by code; a revoked or unknown code is INVITE_NOT_FOUND", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const dave = yield* openReady("dave")
      const group = yield* alice.groups.create("Team", [bob.chatId])
      yield* Effect.forEach([alice, bob], drained)
      const code = yield* alice.groups.inviteCode(group.id)
      expect(code).toMatch(/^[0-9A-Za-z]{22}$/)
      expect(yield* alice.groups.inviteCode(group.id)).toBe(code)
      expect(yield* refusalOf(bob.groups.inviteCode(group.id))).toEqual({ code: "NOT_GROUP_ADMIN", refusal: "forbidden" })
      expect(yield* refusalOf(bob.groups.revokeInvite(group.id))).toEqual({ code: "NOT_GROUP_ADMIN", refusal: "forbidden" })

      const fresh = yield* alice.groups.revokeInvite(group.id)
      expect(fresh).not.toBe(code)
      expect(yield* refusalOf(dave.groups.join(code))).toEqual({ code: "INVITE_NOT_FOUND", refusal: "not_found" })

      expect(yield* dave.groups.join(fresh)).toBe(group.id)
      const [joined] = yield* groupChanges(dave)
      expect(joined).toMatchObject({ kind: "join", groupId: group.id, by: dave.chatId })
      expect(roles(joined!.group!)[dave.chatId]).toBe("member")
      expect((yield* groupChanges(bob)).map(summary)).toEqual([["participants", "add", [dave.chatId], dave.chatId]])
      expect(yield* dave.groups.join(fresh)).toBe(group.id) // already in: nothing happens
      expect(yield* groupChanges(bob)).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("leaving: the last admin's leaving promotes the longest-standing member; the last one out ends the group", () =>
    Effect.gen(function*() {
      const { alice, bob, carol, group } = yield* trio
      yield* alice.groups.leave(group.id)
      expect(yield* groupChanges(alice)).toEqual([{ kind: "leave", groupId: group.id, by: alice.chatId }])
      expect(yield* alice.groups.list).toEqual([])
      for (const session of [bob, carol]) {
        expect((yield* groupChanges(session)).map(summary)).toEqual([
          ["participants", "remove", [alice.chatId], alice.chatId],
          ["participants", "promote", [bob.chatId], null]
        ])
      }
      expect(roles(yield* bob.groups.get(group.id))).toEqual({ [bob.chatId]: "admin", [carol.chatId]: "member" })
      const code = yield* bob.groups.inviteCode(group.id) // bob is admin now

      yield* carol.groups.leave(group.id)
      yield* bob.groups.leave(group.id)
      expect(yield* refusalOf(alice.groups.join(code))).toMatchObject({ code: "INVITE_NOT_FOUND" })
    }).pipe(Effect.provide(sandbox())))

  it.scoped("a member that is away hears every change when it is back, in order", () =>
    Effect.gen(function*() {
      const { alice, carol, group } = yield* trio
      yield* carol.goOffline
      yield* alice.groups.setSubject(group.id, "While you were out")
      yield* alice.groups.updateParticipants(group.id, [carol.chatId], "promote")
      const back = yield* openReady("carol")
      expect((yield* groupChanges(back)).map((change) => [change.kind, change.update ?? change.action])).toEqual([
        ["update", { subject: "While you were out" }],
        ["participants", "promote"]
      ])
      const again = yield* openReady("carol") // taken once: not again
      expect(yield* groupChanges(again)).toEqual([])
    }).pipe(Effect.provide(sandbox())))
})

describe("sandbox group messages", () => {
  it.scoped("reach every other member; delivered once every member session took it, read once all read it", () =>
    Effect.gen(function*() {
      const { alice, bob, carol, group } = yield* trio
      yield* carol.goOffline
      const { engineMessageId, timestamp } = yield* alice.sendText(group.id, "hello team")
      const [toBob] = yield* received(bob)
      expect(toBob).toEqual({
        engineMessageId,
        chatId: group.id,
        from: alice.chatId,
        fromPhone: alice.chatId,
        fromLid: expect.stringMatching(/@lid$/),
        type: "text",
        text: "hello team",
        timestamp
      })
      expect(yield* statuses(alice)).toEqual(["sent"]) // carol has not taken it

      const carolBack = yield* openReady("carol")
      expect((yield* received(carolBack)).map((message) => [message.chatId, message.text])).toEqual([[group.id, "hello team"]])
      expect(yield* statuses(alice)).toEqual(["delivered"])

      yield* bob.markRead(group.id, [engineMessageId])
      expect(yield* statuses(alice)).toEqual([])
      yield* carolBack.markRead(group.id, [engineMessageId])
      expect(yield* statuses(alice)).toEqual(["read"])
      yield* carolBack.markRead(group.id, [engineMessageId])
      expect(yield* statuses(alice)).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("only members may send (NOT_GROUP_MEMBER); an unknown group is GROUP_NOT_FOUND; echo members do nothing", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const dave = yield* openReady("dave")
      const group = yield* alice.groups.create("With an echo", [echo])
      expect(yield* refusalOf(dave.sendText(group.id, "let me in"))).toEqual({ code: "NOT_GROUP_MEMBER", refusal: "forbidden" })
      expect(yield* refusalOf(dave.sendText("120363000000000000@g.us", "anyone?"))).toEqual({ code: "GROUP_NOT_FOUND", refusal: "not_found" })
      yield* alice.sendText(group.id, "echo?")
      yield* TestClock.adjust("1 minute")
      const events = yield* drained(alice)
      expect(events.filter((event) => event._tag === "MessageReceived")).toEqual([]) // no echo in a group
      expect(events.flatMap((event) => event._tag === "MessageStatusChanged" ? [event.status] : [])).toEqual(["sent"])
      expect(yield* refusalOf(alice.sendText("12345@lid", "?"))).toEqual({ code: "UNSUPPORTED_CHAT", refusal: "not_supported" })
    }).pipe(Effect.provide(sandbox())))

  it.scoped("media is uploaded once and every member downloads it; reactions reach every member", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      const { alice, bob, carol, group } = yield* trio
      const data = new Uint8Array([137, 80, 78, 71, 1, 2, 3])
      const engineMessageId = engine.newMessageId()
      yield* alice.connection.send({
        engineMessageId,
        chatId: group.id,
        content: { type: "media", media: { kind: "image", data, mimetype: "image/png", filename: null, caption: "look", ptt: false } }
      })
      for (const session of [bob, carol]) {
        const [message] = yield* received(session)
        expect(message).toMatchObject({ chatId: group.id, from: alice.chatId, type: "image", caption: "look" })
        expect(yield* session.downloadMedia(message!.media!)).toEqual(data)
      }

      yield* bob.react({ chatId: group.id, target: { engineMessageId, fromMe: false, from: alice.chatId }, emoji: "👍" })
      for (const session of [alice, carol]) {
        const reactions = (yield* drained(session)).flatMap((event) => event._tag === "ReactionReceived" ? [event.reaction] : [])
        expect(reactions).toMatchObject([{ chatId: group.id, from: bob.chatId, targetEngineMessageId: engineMessageId, emoji: "👍" }])
      }
      expect((yield* drained(bob)).filter((event) => event._tag === "ReactionReceived")).toEqual([])
    }).pipe(Effect.provide(sandbox())))
})

// --- channels -------------------------------------------------------------------------------

describe("sandbox channels", () => {
  it.scoped("create, look up, follow by id or invite code, post to followers, recent messages newest first", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const carol = yield* openReady("carol")
      const channel = yield* alice.channels.create("News", "Daily news")
      expect(channel).toEqual({
        id: expect.stringMatching(/^1203630\d{11}@newsletter$/),
        name: "News",
        description: "Daily news",
        inviteCode: expect.stringMatching(/^[0-9A-Za-z]{22}$/),
        subscribers: 0,
        role: "owner",
        createdAt: new Date(0).toISOString()
      })
      expect(yield* bob.channels.get(channel.id)).toMatchObject({ role: "guest", subscribers: 0 })
      expect(yield* bob.channels.subscribe({ channelId: channel.id })).toMatchObject({ role: "subscriber", subscribers: 1 })
      expect(yield* carol.channels.subscribe({ inviteCode: channel.inviteCode! })).toMatchObject({ role: "subscriber", subscribers: 2 })
      expect(yield* bob.channels.subscribe({ channelId: channel.id })).toMatchObject({ subscribers: 2 }) // again: no change
      expect(yield* alice.channels.subscribe({ channelId: channel.id })).toMatchObject({ role: "owner", subscribers: 2 })

      const first = yield* alice.sendText(channel.id, "first")
      const second = yield* alice.sendText(channel.id, "second")
      for (const session of [bob, carol]) {
        expect((yield* received(session)).map(({ chatId, from, fromPhone, fromLid, text }) => ({ chatId, from, fromPhone, fromLid, text }))).toEqual(
          ["first", "second"].map((text) => ({ chatId: channel.id, from: channel.id, fromPhone: null, fromLid: null, text }))
        )
      }
      expect(yield* statuses(alice)).toEqual(["sent", "sent"]) // nobody sends receipts to a channel
      const recent = yield* bob.channels.messages(channel.id, 10)
      expect(recent.map(({ id, text, type }) => [id, type, text])).toEqual([
        [second.engineMessageId, "text", "second"],
        [first.engineMessageId, "text", "first"]
      ])
      expect(recent[0]).toMatchObject({ channelId: channel.id, timestamp: second.timestamp.toISOString() })
      expect(yield* alice.channels.messages(channel.id, 1)).toHaveLength(1)

      yield* carol.channels.unsubscribe(channel.id)
      yield* carol.channels.unsubscribe(channel.id) // not following: no change
      yield* alice.sendText(channel.id, "third")
      expect((yield* received(carol))).toEqual([])
      expect((yield* received(bob)).map((message) => message.text)).toEqual(["third"])
      expect(yield* carol.channels.get(channel.id)).toMatchObject({ role: "guest", subscribers: 1 })
    }).pipe(Effect.provide(sandbox())))

  it.scoped("only the owner posts and deletes (NOT_CHANNEL_OWNER); an unknown channel is CHANNEL_NOT_FOUND", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const channel = yield* alice.channels.create("News", null)
      yield* bob.channels.subscribe({ channelId: channel.id })
      const notOwner = { code: "NOT_CHANNEL_OWNER", refusal: "forbidden" }
      expect(yield* refusalOf(bob.sendText(channel.id, "mine"))).toEqual(notOwner)
      expect(yield* refusalOf(bob.channels.delete(channel.id))).toEqual(notOwner)

      const notFound = { code: "CHANNEL_NOT_FOUND", refusal: "not_found" }
      const unknown = "120363000000000000@newsletter"
      expect(yield* refusalOf(bob.channels.get(unknown))).toEqual(notFound)
      expect(yield* refusalOf(bob.channels.subscribe({ channelId: unknown }))).toEqual(notFound)
      expect(yield* refusalOf(bob.channels.subscribe({ inviteCode: "NoSuchCode123" }))).toEqual(notFound)
      expect(yield* refusalOf(bob.channels.unsubscribe(unknown))).toEqual(notFound)
      expect(yield* refusalOf(bob.channels.messages(unknown, 5))).toEqual(notFound)
      expect(yield* refusalOf(alice.sendText(unknown, "hello?"))).toEqual(notFound)

      yield* alice.channels.delete(channel.id)
      expect(yield* refusalOf(bob.channels.get(channel.id))).toEqual(notFound)
      expect(yield* refusalOf(alice.sendText(channel.id, "gone"))).toEqual(notFound)
    }).pipe(Effect.provide(sandbox())))
})

// --- labels and contacts -------------------------------------------------------------------

describe("sandbox labels", () => {
  it.scoped("refused with NOT_A_BUSINESS_ACCOUNT until the session is marked a business account", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const conflict = { code: "NOT_A_BUSINESS_ACCOUNT", refusal: "conflict" }
      expect(yield* refusalOf(alice.labels.create("VIP", null))).toEqual(conflict)
      expect(yield* refusalOf(alice.labels.addToChat(echo, "1"))).toEqual(conflict)
      expect(yield* refusalOf(alice.labels.removeFromChat(echo, "1"))).toEqual(conflict)

      yield* setBusiness("alice", true)
      expect(yield* alice.labels.create("VIP", null)).toEqual({ id: "1", name: "VIP", color: 0 })
      yield* setBusiness("alice", false)
      expect(yield* refusalOf(alice.labels.create("Later", null))).toEqual(conflict)
    }).pipe(Effect.provide(sandbox())))

  it.scoped("create, label and unlabel chats; each change reaches the session as LabelChanged", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      yield* setBusiness("alice", true)
      const vip = yield* alice.labels.create("VIP", null)
      const later = yield* alice.labels.create("Later", 7)
      const third = yield* alice.labels.create("Third", null)
      expect([vip, later, third]).toEqual([
        { id: "1", name: "VIP", color: 0 },
        { id: "2", name: "Later", color: 7 },
        { id: "3", name: "Third", color: 2 }
      ])
      yield* alice.labels.addToChat(bob.chatId, vip.id)
      yield* alice.labels.addToChat(bob.chatId, vip.id) // already: no change
      yield* alice.labels.removeFromChat(bob.chatId, vip.id)
      yield* alice.labels.removeFromChat(bob.chatId, vip.id) // not labelled: no change
      expect(yield* labelChanges(alice)).toEqual<Array<LabelChange>>([
        { kind: "label", label: vip, deleted: false },
        { kind: "label", label: later, deleted: false },
        { kind: "label", label: third, deleted: false },
        { kind: "association", chatId: bob.chatId, labelId: "1", added: true },
        { kind: "association", chatId: bob.chatId, labelId: "1", added: false }
      ])
      expect(yield* labelChanges(bob)).toEqual([])
      const notFound = { code: "LABEL_NOT_FOUND", refusal: "not_found" }
      expect(yield* refusalOf(alice.labels.addToChat(bob.chatId, "99"))).toEqual(notFound)
      expect(yield* refusalOf(alice.labels.removeFromChat(bob.chatId, "99"))).toEqual(notFound)
    }).pipe(Effect.provide(sandbox())))

  it.scoped("businessByDefault makes every session a business account unless set otherwise; forget drops its labels", () =>
    Effect.gen(function*() {
      const engine = yield* Engine
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      expect((yield* alice.labels.create("VIP", null)).id).toBe("1")
      yield* setBusiness("bob", false)
      expect(yield* refusalOf(bob.labels.create("VIP", null))).toMatchObject({ code: "NOT_A_BUSINESS_ACCOUNT" })

      yield* alice.goOffline
      yield* engine.forget("alice")
      const aliceAgain = yield* openReady("alice")
      expect((yield* aliceAgain.labels.create("Fresh", null)).id).toBe("1")
    }).pipe(Effect.provide(sandbox({ businessByDefault: true }))))
})

describe("sandbox contacts", () => {
  it.scoped("check: sessions' phones and echo phones exist, anybody else does not", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const bobPhone = sandboxPhoneOf("bob")
      const checks = yield* alice.contacts.check([bobPhone, "15550001234", "4915112345678", sandboxPhoneOf("alice")])
      expect(checks).toEqual([
        { number: bobPhone, exists: true, chatId: bob.chatId, lid: expect.stringMatching(/^\d{14}@lid$/) },
        { number: "15550001234", exists: true, chatId: "15550001234@c.us", lid: null },
        { number: "4915112345678", exists: false, chatId: null, lid: null },
        { number: sandboxPhoneOf("alice"), exists: true, chatId: alice.chatId, lid: expect.stringMatching(/@lid$/) }
      ])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("directory operations need a Ready connection", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      yield* alice.goOffline
      const error = yield* Effect.flip(alice.contacts.check(["15550001234"]))
      expect(error).toMatchObject({ code: "NOT_CONNECTED", transient: true })
      expect(yield* Effect.flip(alice.groups.list)).toMatchObject({ code: "NOT_CONNECTED" })
    }).pipe(Effect.provide(sandbox())))
})

// --- durability -----------------------------------------------------------------------------

describe("the directory on the SQL ledger", () => {
  it.effect("survives a restart of the network on the same file: groups, channels, labels, business flags, held changes", () =>
    Effect.gen(function*() {
      const file = join(mkdtempSync(join(tmpdir(), "switchboard-sandbox-")), "store.db")

      const before = yield* Effect.gen(function*() {
        const { alice, bob, group } = yield* trio
        const code = yield* alice.groups.inviteCode(group.id)
        const channel = yield* alice.channels.create("News", null)
        yield* bob.channels.subscribe({ channelId: channel.id })
        yield* alice.sendText(channel.id, "kept")
        yield* setBusiness("alice", true)
        yield* alice.labels.addToChat(bob.chatId, "1").pipe(Effect.flip) // no label yet
        const vip = yield* alice.labels.create("VIP", null)
        yield* alice.labels.addToChat(bob.chatId, vip.id)
        yield* bob.goOffline
        yield* alice.groups.setSubject(group.id, "Renamed while bob is away")
        yield* Effect.forEach([alice, bob], drained)
        return { group: yield* alice.groups.get(group.id), code, channel }
      }).pipe(Effect.scoped, Effect.provide(sandboxOnFile(file)))
      expect(yield* heldRows(file, "bob")).toEqual([expect.stringMatching(new RegExp(`^group:${before.group.id}:update:\\d+$`))])

      yield* Effect.gen(function*() {
        const alice = yield* openReady("alice")
        expect(yield* alice.groups.list).toEqual([before.group])
        expect(yield* alice.groups.inviteCode(before.group.id)).toBe(before.code)
        expect(yield* alice.channels.get(before.channel.id)).toMatchObject({ role: "owner", subscribers: 1 })
        expect((yield* alice.channels.messages(before.channel.id, 5)).map((post) => post.text)).toEqual(["kept"])
        expect(yield* alice.labels.create("Next", null)).toEqual({ id: "2", name: "Next", color: 1 })

        const bob = yield* openReady("bob")
        expect((yield* groupChanges(bob)).map((change) => change.update)).toEqual([{ subject: "Renamed while bob is away" }])
        yield* alice.sendText(before.channel.id, "after the restart")
        expect((yield* received(bob)).map((message) => message.text)).toEqual(["after the restart"])
        const { engineMessageId } = yield* bob.sendText(before.group.id, "still a team")
        expect((yield* received(alice)).map((message) => message.engineMessageId)).toEqual([engineMessageId])
      }).pipe(Effect.scoped, Effect.provide(sandboxOnFile(file)))
      expect(yield* heldRows(file, "bob")).toEqual([])
    }))
})
