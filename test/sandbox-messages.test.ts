import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildVcard, cardOf } from "../src/domain/vcard.js"
import type { EngineEvent, OutboundContent } from "../src/runtime/Engine.js"
import type { MessageTarget } from "../src/runtime/EngineMessageActions.js"
import { sandboxPhoneOf } from "../src/runtime/engines/sandbox/SandboxNetwork.js"
import { heldRows } from "./support/sqlLedger.js"
import { drained, drainedOf, openReady, sandbox, sandboxOnFile, type TestSession, waitFor } from "./support/sandboxSessions.js"

/**
 * The issue-17 message surface between sandbox sessions, at the engine level: what each new kind
 * of send delivers, what edits, revokes, pins and votes tell the other side, presence, the echo
 * contacts' answers, and held events of the new kinds across a restart of the network.
 */

const echoChat = "15550001234@c.us"

const place = { latitude: 52.52, longitude: 13.405, name: "Brandenburger Tor", address: "Pariser Platz, Berlin", url: null }
const ada = { name: "Ada Lovelace", phone: "+44 20 7946 0018", organization: "Analytical Engines; Ltd", email: "ada@example.org" }
const bea = { name: "Bea", phone: "4915112345678" }

/** A plain Uint8Array, not a Buffer: a Buffer survives JSON by its own `toJSON`, which would hide a lost secret. */
const newSecret = () => new Uint8Array(randomBytes(32))

const pollContent = (secret: Uint8Array = newSecret()): Extract<OutboundContent, { type: "poll" }> => ({
  type: "poll",
  poll: { name: "Lunch?", options: ["Pizza", "Sushi", "Salad"], selectableCount: 1, secret }
})

const ownTarget = (sender: TestSession, engineMessageId: string): MessageTarget => ({ engineMessageId, fromMe: true, from: sender.chatId })
const theirTarget = (sender: TestSession, engineMessageId: string): MessageTarget => ({ engineMessageId, fromMe: false, from: sender.chatId })

describe("sends of every kind", () => {
  it.scoped("a location, contact cards, a poll, a sticker, a link preview and a forward arrive with their content", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")

      yield* alice.send(bob.chatId, { type: "location", location: place })
      expect((yield* waitFor(bob, "MessageReceived")).message).toMatchObject({ type: "location", text: null, location: place })

      const cards = [ada, bea].map((contact) => ({ name: contact.name, vcard: buildVcard(contact) }))
      yield* alice.send(bob.chatId, { type: "contacts", contacts: cards })
      expect((yield* waitFor(bob, "MessageReceived")).message).toMatchObject({ type: "contact", contacts: [cardOf(ada), cardOf(bea)] })

      const secret = newSecret()
      const { engineMessageId: pollId } = yield* alice.send(bob.chatId, pollContent(secret))
      const poll = (yield* waitFor(bob, "MessageReceived")).message
      expect(poll).toMatchObject({ engineMessageId: pollId, type: "poll", poll: { name: "Lunch?", options: ["Pizza", "Sushi", "Salad"], selectableCount: 1 } })
      expect(poll.poll!.secret).toEqual(secret)

      const webp = new Uint8Array(randomBytes(600))
      yield* alice.send(bob.chatId, {
        type: "media",
        media: { kind: "sticker", data: webp, mimetype: "image/webp", filename: null, caption: null, ptt: false }
      })
      const sticker = (yield* waitFor(bob, "MessageReceived")).message
      expect(sticker).toMatchObject({ type: "sticker", media: { mimetype: "image/webp", size: 600 } })
      expect(yield* bob.connection.downloadMedia(sticker.media!)).toEqual(webp)

      const thumbnail = new Uint8Array(randomBytes(40))
      yield* alice.send(bob.chatId, {
        type: "text",
        text: "look https://example.org/a",
        linkPreview: { url: "https://example.org/a", title: "A page", description: null, thumbnail }
      })
      expect((yield* waitFor(bob, "MessageReceived")).message).toMatchObject({
        type: "text",
        linkPreview: { url: "https://example.org/a", title: "A page", description: null, thumbnail: Buffer.from(thumbnail).toString("base64") }
      })

      yield* alice.send(bob.chatId, { type: "text", text: "passed on" }, true)
      expect((yield* waitFor(bob, "MessageReceived")).message).toMatchObject({ text: "passed on", forwarded: true })
      yield* alice.sendText(bob.chatId, "my own")
      expect((yield* waitFor(bob, "MessageReceived")).message.forwarded).toBeUndefined()
    }).pipe(Effect.provide(sandbox())))

  it.scoped("to a group and to a channel's followers, like a text", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const group = yield* alice.connection.groups.create("Lunch club", [bob.chatId])
      const { engineMessageId } = yield* alice.send(group.id, pollContent())
      expect((yield* waitFor(bob, "MessageReceived")).message).toMatchObject({
        engineMessageId,
        chatId: group.id,
        from: alice.chatId,
        type: "poll",
        poll: { name: "Lunch?" }
      })

      const channel = yield* alice.connection.channels.create("Places", null)
      yield* bob.connection.channels.subscribe({ channelId: channel.id })
      yield* alice.send(channel.id, { type: "location", location: place })
      expect((yield* waitFor(bob, "MessageReceived")).message).toMatchObject({ chatId: channel.id, from: channel.id, type: "location", location: place })
      expect(yield* bob.connection.channels.messages(channel.id, 5)).toMatchObject([{ type: "location", text: "Brandenburger Tor" }])
    }).pipe(Effect.provide(sandbox())))
})

describe("edits, revokes, stars, pins and votes", () => {
  it.scoped("an edit reaches the other person on the same id; only the writer may edit", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const { engineMessageId } = yield* alice.sendText(bob.chatId, "see you at 5")
      yield* waitFor(bob, "MessageReceived")

      yield* alice.connection.messages.edit({ chatId: bob.chatId, target: ownTarget(alice, engineMessageId), type: "text", text: "see you at 6" })
      expect((yield* waitFor(bob, "MessageEdited")).edit).toMatchObject({
        chatId: alice.chatId,
        from: alice.chatId,
        targetEngineMessageId: engineMessageId,
        text: "see you at 6"
      })

      const byOther = yield* Effect.flip(bob.connection.messages.edit({ chatId: alice.chatId, target: theirTarget(alice, engineMessageId), type: "text", text: "x" }))
      expect(byOther).toMatchObject({ refusal: "forbidden" })
      // Claiming it as one's own does not fool the network, which knows who wrote it.
      const claimed = yield* Effect.flip(bob.connection.messages.edit({ chatId: alice.chatId, target: ownTarget(bob, engineMessageId), type: "text", text: "x" }))
      expect(claimed).toMatchObject({ refusal: "forbidden" })
      const unknown = yield* Effect.flip(alice.connection.messages.edit({ chatId: bob.chatId, target: ownTarget(alice, "SB-NEVER"), type: "text", text: "x" }))
      expect(unknown).toMatchObject({ refusal: "not_found" })

      const { engineMessageId: pollId } = yield* alice.send(bob.chatId, pollContent())
      const poll = yield* Effect.flip(alice.connection.messages.edit({ chatId: bob.chatId, target: ownTarget(alice, pollId), type: "poll", text: "x" }))
      expect(poll).toMatchObject({ refusal: "conflict", code: "NOT_EDITABLE" })
      expect(yield* drainedOf(alice, "MessageEdited")).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("a revoke reaches the other person, and the message can be edited no more", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const { engineMessageId } = yield* alice.sendText(bob.chatId, "oops")
      yield* waitFor(bob, "MessageReceived")
      const byOther = yield* Effect.flip(bob.connection.messages.revoke(alice.chatId, theirTarget(alice, engineMessageId)))
      expect(byOther).toMatchObject({ refusal: "forbidden" })

      yield* alice.connection.messages.revoke(bob.chatId, ownTarget(alice, engineMessageId))
      expect((yield* waitFor(bob, "MessageRevoked")).revoke).toMatchObject({ chatId: alice.chatId, from: alice.chatId, targetEngineMessageId: engineMessageId })
      const late = yield* Effect.flip(alice.connection.messages.edit({ chatId: bob.chatId, target: ownTarget(alice, engineMessageId), type: "text", text: "x" }))
      expect(late).toMatchObject({ refusal: "conflict", code: "MESSAGE_REVOKED" })
      // A retried revoke succeeds, and bob hears it once.
      yield* alice.connection.messages.revoke(bob.chatId, ownTarget(alice, engineMessageId))
      expect(yield* drainedOf(bob, "MessageRevoked")).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("a pin reaches the other person; a star stays on the account", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const { engineMessageId } = yield* alice.sendText(bob.chatId, "the address")
      yield* waitFor(bob, "MessageReceived")

      yield* bob.connection.messages.pin({ chatId: alice.chatId, target: theirTarget(alice, engineMessageId), pinned: true, durationSeconds: 86_400 })
      expect((yield* waitFor(alice, "MessagePinned")).pin).toMatchObject({
        chatId: bob.chatId,
        from: bob.chatId,
        targetEngineMessageId: engineMessageId,
        pinned: true
      })

      yield* bob.connection.messages.star(alice.chatId, theirTarget(alice, engineMessageId), true)
      expect((yield* drainedOf(alice, "MessagePinned")).length + (yield* drainedOf(alice, "MessageReceived")).length).toBe(0)
    }).pipe(Effect.provide(sandbox())))

  it.scoped("a vote reaches the poll's writer with the option texts; a vote on an unknown poll or option is refused", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const content = pollContent()
      const { engineMessageId } = yield* alice.send(bob.chatId, content)
      yield* waitFor(bob, "MessageReceived")

      const vote = (options: ReadonlyArray<string>, target = theirTarget(alice, engineMessageId)) =>
        bob.connection.messages.votePoll({ chatId: alice.chatId, target, poll: content.poll, options })
      yield* vote(["Sushi"])
      expect((yield* waitFor(alice, "PollVoteReceived")).vote).toMatchObject({
        chatId: bob.chatId,
        voter: bob.chatId,
        targetEngineMessageId: engineMessageId,
        options: ["Sushi"]
      })
      yield* vote([]) // withdrawn
      expect((yield* waitFor(alice, "PollVoteReceived")).vote.options).toEqual([])

      expect(yield* Effect.flip(vote(["Sushi"], theirTarget(alice, "SB-NO-SUCH-POLL")))).toMatchObject({ refusal: "not_found" })
      expect(yield* Effect.flip(vote(["Burgers"]))).toMatchObject({ refusal: "invalid" })
      expect(yield* Effect.flip(vote(["Pizza", "Sushi"]))).toMatchObject({ refusal: "invalid" }) // one choice only
      const { engineMessageId: textId } = yield* alice.sendText(bob.chatId, "not a poll")
      expect(yield* Effect.flip(vote(["Sushi"], theirTarget(alice, textId)))).toMatchObject({ refusal: "not_found" })
    }).pipe(Effect.provide(sandbox())))

  it.scoped("in a group, an edit, a revoke, a pin and a vote reach every other member", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      const carol = yield* openReady("carol")
      const group = yield* alice.connection.groups.create("Trio", [bob.chatId, carol.chatId])
      const { engineMessageId: textId } = yield* alice.sendText(group.id, "meet at 5")
      const content = pollContent()
      const { engineMessageId: pollId } = yield* alice.send(group.id, content)

      yield* alice.connection.messages.edit({ chatId: group.id, target: ownTarget(alice, textId), type: "text", text: "meet at 6" })
      yield* carol.connection.messages.pin({ chatId: group.id, target: theirTarget(alice, textId), pinned: true, durationSeconds: 86_400 })
      yield* bob.connection.messages.votePoll({ chatId: group.id, target: theirTarget(alice, pollId), poll: content.poll, options: ["Salad"] })
      yield* alice.connection.messages.revoke(group.id, ownTarget(alice, textId))

      const inGroup = { chatId: group.id }
      const [toAlice, toBob, toCarol] = yield* Effect.forEach([alice, bob, carol], (member) => drained(member))
      const what = (events: ReadonlyArray<EngineEvent>) =>
        events.flatMap((event): ReadonlyArray<Record<string, unknown>> => {
          switch (event._tag) {
            case "MessageEdited":
              return [{ edited: event.edit }]
            case "MessageRevoked":
              return [{ revoked: event.revoke }]
            case "MessagePinned":
              return [{ pinned: event.pin }]
            case "PollVoteReceived":
              return [{ vote: event.vote }]
            default:
              return []
          }
        })
      const edited = { edited: { ...inGroup, from: alice.chatId, targetEngineMessageId: textId, text: "meet at 6", timestamp: expect.any(Date) } }
      const pinned = { pinned: { ...inGroup, from: carol.chatId, targetEngineMessageId: textId, pinned: true, timestamp: expect.any(Date) } }
      const vote = { vote: { ...inGroup, voter: bob.chatId, targetEngineMessageId: pollId, options: ["Salad"], timestamp: expect.any(Date) } }
      const revoked = { revoked: { ...inGroup, from: alice.chatId, targetEngineMessageId: textId, timestamp: expect.any(Date) } }
      // Each member hears what the others did, in order, and nobody hears their own doings back.
      expect(what(toAlice!)).toEqual([pinned, vote])
      expect(what(toBob!)).toEqual([edited, pinned, revoked])
      expect(what(toCarol!)).toEqual([edited, vote, revoked])
    }).pipe(Effect.provide(sandbox())))
})

describe("presence", () => {
  it.scoped("typing in a person chat shows on the other side", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      yield* alice.connection.presence.set({ chatId: bob.chatId, state: "typing" })
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toEqual({ chatId: alice.chatId, state: "typing", lastSeen: null })
      yield* alice.connection.presence.set({ chatId: bob.chatId, state: "paused" })
      expect((yield* waitFor(bob, "PresenceUpdated")).presence.state).toBe("paused")
      expect(yield* drainedOf(alice, "PresenceUpdated")).toEqual([])
    }).pipe(Effect.provide(sandbox())))

  it.scoped("a subscriber hears the contact's presence at once, then every change, with last seen when it goes offline", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("1 hour")
      const alice = yield* openReady("alice")
      const bob = yield* openReady("bob")
      yield* bob.connection.presence.subscribe(alice.chatId)
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toEqual({ chatId: alice.chatId, state: "online", lastSeen: null })

      yield* alice.connection.presence.set({ state: "offline" })
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toEqual({ chatId: alice.chatId, state: "offline", lastSeen: new Date(3_600_000) })
      yield* alice.connection.presence.set({ state: "online" })
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toEqual({ chatId: alice.chatId, state: "online", lastSeen: null })

      yield* TestClock.adjust("1 minute")
      yield* alice.goOffline
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toEqual({ chatId: alice.chatId, state: "offline", lastSeen: new Date(3_660_000) })
      // Subscribing again now tells the same.
      yield* bob.connection.presence.subscribe(alice.chatId)
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toMatchObject({ state: "offline", lastSeen: new Date(3_660_000) })

      yield* bob.connection.presence.subscribe(`${sandboxPhoneOf("nobody")}@c.us`)
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toMatchObject({ state: "offline", lastSeen: null })
      yield* bob.connection.presence.subscribe(echoChat)
      expect((yield* waitFor(bob, "PresenceUpdated")).presence).toEqual({ chatId: echoChat, state: "online", lastSeen: null })
    }).pipe(Effect.provide(sandbox())))
})

describe("echo contacts", () => {
  it.scoped("vote for a poll's first option, and answer a location or contact cards with the same", () =>
    Effect.gen(function*() {
      const alice = yield* openReady("alice")
      const { engineMessageId: pollId } = yield* alice.send(echoChat, pollContent())
      expect((yield* waitFor(alice, "PollVoteReceived")).vote).toMatchObject({
        chatId: echoChat,
        voter: echoChat,
        targetEngineMessageId: pollId,
        options: ["Pizza"]
      })

      yield* alice.send(echoChat, { type: "location", location: place }, true)
      const answer = (yield* waitFor(alice, "MessageReceived")).message
      expect(answer).toMatchObject({ chatId: echoChat, from: echoChat, type: "location", location: place })
      expect(answer.forwarded).toBeUndefined()

      yield* alice.send(echoChat, { type: "contacts", contacts: [{ name: ada.name, vcard: buildVcard(ada) }] })
      expect((yield* waitFor(alice, "MessageReceived")).message).toMatchObject({ from: echoChat, type: "contact", contacts: [cardOf(ada)] })

      yield* alice.sendText(echoChat, "still echoing text")
      expect((yield* waitFor(alice, "MessageReceived")).message).toMatchObject({ type: "text", text: "still echoing text" })
    }).pipe(Effect.provide(sandbox())))
})

describe("held across a restart of the network (SQLite ledger)", () => {
  it.scoped("a poll (with its secret), an edit, a revoke, a pin and a vote wait for an away session and arrive intact", () =>
    Effect.gen(function*() {
      const file = join(mkdtempSync(join(tmpdir(), "switchboard-sandbox-")), "store.db")
      const secret = newSecret()
      const content = pollContent(secret)
      yield* TestClock.adjust("1 day")

      const ids = yield* Effect.gen(function*() {
        const bob = yield* openReady("bob")
        yield* bob.goOffline
        const alice = yield* openReady("alice")
        const poll = yield* alice.send(bob.chatId, content)
        const text = yield* alice.sendText(bob.chatId, "draft")
        yield* alice.connection.messages.edit({ chatId: bob.chatId, target: ownTarget(alice, text.engineMessageId), type: "text", text: "final" })
        yield* alice.connection.messages.pin({ chatId: bob.chatId, target: ownTarget(alice, text.engineMessageId), pinned: true, durationSeconds: 86_400 })
        yield* alice.connection.messages.votePoll({ chatId: bob.chatId, target: ownTarget(alice, poll.engineMessageId), poll: content.poll, options: ["Salad"] })
        yield* alice.connection.messages.revoke(bob.chatId, ownTarget(alice, text.engineMessageId))
        yield* alice.goOffline
        return { poll: poll.engineMessageId, text: text.engineMessageId }
      }).pipe(Effect.scoped, Effect.provide(sandboxOnFile(file)))
      expect((yield* heldRows(file, "bob")).map((key) => key.split(":")[0])).toEqual(["msg", "msg", "edit", "pin", "vote", "revoke"])

      yield* Effect.gen(function*() {
        const bob = yield* openReady("bob")
        const at = new Date(86_400_000)
        const poll = (yield* waitFor(bob, "MessageReceived")).message
        expect(poll).toMatchObject({ engineMessageId: ids.poll, type: "poll", timestamp: at })
        expect(poll.poll!.secret).toBeInstanceOf(Uint8Array)
        expect(poll.poll!.secret).toEqual(secret)
        expect((yield* waitFor(bob, "MessageReceived")).message).toMatchObject({ engineMessageId: ids.text, text: "draft" })
        expect((yield* waitFor(bob, "MessageEdited")).edit).toEqual({ chatId: sandboxChat("alice"), from: sandboxChat("alice"), targetEngineMessageId: ids.text, text: "final", timestamp: at })
        expect((yield* waitFor(bob, "MessagePinned")).pin).toMatchObject({ targetEngineMessageId: ids.text, pinned: true, timestamp: at })
        expect((yield* waitFor(bob, "PollVoteReceived")).vote).toEqual({ chatId: sandboxChat("alice"), voter: sandboxChat("alice"), targetEngineMessageId: ids.poll, options: ["Salad"], timestamp: at })
        expect((yield* waitFor(bob, "MessageRevoked")).revoke).toMatchObject({ targetEngineMessageId: ids.text, timestamp: at })
        yield* drainedOf(bob, "MessageReceived")
        expect(yield* heldRows(file, "bob")).toEqual([])

        // The network still knows the poll's options and the revoke after the restart.
        const alicesPoll: MessageTarget = { engineMessageId: ids.poll, fromMe: false, from: sandboxChat("alice") }
        yield* bob.connection.messages.votePoll({ chatId: sandboxChat("alice"), target: alicesPoll, poll: content.poll, options: ["Pizza"] })
        expect(yield* Effect.flip(bob.connection.messages.votePoll({ chatId: sandboxChat("alice"), target: alicesPoll, poll: content.poll, options: ["Tacos"] })))
          .toMatchObject({ refusal: "invalid" })
        const alice = yield* openReady("alice")
        expect((yield* waitFor(alice, "PollVoteReceived")).vote).toMatchObject({ voter: bob.chatId, options: ["Pizza"] })
        expect(yield* Effect.flip(alice.connection.messages.edit({ chatId: bob.chatId, target: ownTarget(alice, ids.text), type: "text", text: "x" })))
          .toMatchObject({ code: "MESSAGE_REVOKED" })
      }).pipe(Effect.scoped, Effect.provide(sandboxOnFile(file)))
    }))
})

const sandboxChat = (sessionId: string) => `${sandboxPhoneOf(sessionId)}@c.us`
