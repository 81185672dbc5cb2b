import { describe, expect, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Clock, Context, Duration, Effect, Fiber, FiberRef, HashMap, HashSet, Logger, Option, Ref, Schedule, TestClock } from "effect"
import { advanceUntil, createAndLink, letFibersRun, quickReconnect as reconnect, startCore, statusIs } from "./support/core.js"
import { tempDir } from "./support/gateway.js"
import type { ConnectOptions, SendCommand } from "../src/runtime/Engine.js"
import { engineCall } from "../src/runtime/EngineCall.js"

const textOf = (command: SendCommand) => command.content.type === "text" ? command.content.text : undefined

describe("SessionActor state machine", () => {
  it.scoped("links through created → initializing → qr_ready → authenticating → ready, persisting and publishing each step", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ sandboxPairDelay: Duration.seconds(2), reconnect })
      const session = yield* core.sessions.create({ name: "link" })
      expect(session.status).toBe("created")
      yield* core.supervisor.start(session.id)
      yield* advanceUntil(statusIs(core, session.id, "qr_ready"))
      const qr = yield* core.sessions.qr(session.id)
      expect(qr.qr).toMatch(/^sandbox:/)
      yield* advanceUntil(statusIs(core, session.id, "ready"))
      expect(yield* core.statuses(session.id)).toEqual(["initializing", "qr_ready", "authenticating", "ready"])
      const stored = yield* core.sessions.get(session.id)
      expect(stored.phone).toMatch(/^999\d{9}$/)
      const kinds = (yield* core.events(session.id)).map((e) => e.event)
      expect(kinds).toContain("session.qr")
    }))

  it.scoped("reconnects after a dropped connection, after a backoff, and publishes ready ⇄ disconnected", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const id = yield* createAndLink(core, "drop")
      yield* core.network.dropConnection(id)
      yield* advanceUntil(statusIs(core, id, "disconnected"), "1 millis", 100)
      const disconnected = yield* core.sessions.get(id)
      expect(disconnected.lastError?.code).toBe("CONNECTION_LOST")
      yield* advanceUntil(statusIs(core, id, "ready"))
      expect((yield* core.statuses(id)).slice(-2)).toEqual(["disconnected", "ready"])
      const attempts = yield* core.attempts(id)
      expect(attempts).toHaveLength(2)
      // The first reconnect waits between half and all of the initial delay (jitter).
      const gap = attempts[1]!.at - attempts[0]!.at
      expect(gap).toBeGreaterThanOrEqual(500)
      expect(gap).toBeLessThanOrEqual(1_100)
    }))

  it.scoped("backs off exponentially up to the cap, then gives up with RECONNECT_EXHAUSTED", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const id = yield* createAndLink(core, "exhaust")
      const linkedAt = (yield* core.attempts(id))[0]!.at
      yield* core.network.refuseConnections(id, Duration.hours(1))
      yield* core.network.dropConnection(id)
      yield* advanceUntil(statusIs(core, id, "failed"), "100 millis")
      const failed = yield* core.sessions.get(id)
      expect(failed.lastError).toMatchObject({ code: "RECONNECT_EXHAUSTED" })
      expect(failed.lastError?.message).toContain("CONNECTION_REFUSED")
      const times = [linkedAt, ...(yield* core.attempts(id)).slice(1).map((a) => a.at)]
      expect(times).toHaveLength(1 + reconnect.maxAttempts)
      // Nominal delays 1, 2, 4, 8 (capped), 8 s, each jittered into [50 %, 100 %] (+ one clock step).
      const nominal = [1_000, 2_000, 4_000, 8_000, 8_000]
      times.slice(1).forEach((at, i) => {
        const gap = at - times[i]!
        expect(gap, `gap ${i + 1}`).toBeGreaterThanOrEqual(nominal[i]! * 0.5)
        expect(gap, `gap ${i + 1}`).toBeLessThanOrEqual(nominal[i]! + 200)
      })
      // It is terminal: no more attempts, and the actor is gone.
      yield* TestClock.adjust("10 minutes")
      yield* letFibersRun
      expect(yield* core.attempts(id)).toHaveLength(times.length)
      expect(yield* core.supervisor.running).not.toContain(id)
    }))

  it.scoped("resets the reconnect budget after a healthy period, and only then", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect: { ...reconnect, maxAttempts: 1 } })
      const healthy = yield* createAndLink(core, "healthy")
      // The single reconnect of the budget is used up…
      yield* core.network.dropConnection(healthy)
      yield* advanceUntil(statusIs(core, healthy, "ready"))
      // …and given back after a connection that stayed up past healthyAfter.
      yield* TestClock.adjust("31 seconds")
      yield* core.network.dropConnection(healthy)
      yield* advanceUntil(statusIs(core, healthy, "ready"))
      // A connection that drops again at once has not earned it back.
      yield* core.network.dropConnection(healthy)
      yield* advanceUntil(statusIs(core, healthy, "failed"))
      expect((yield* core.sessions.get(healthy)).lastError?.code).toBe("RECONNECT_EXHAUSTED")
    }))

  it.scoped("reconnects at once, without backoff, when the server asks for a restart", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const id = yield* createAndLink(core, "restart")
      const before = yield* core.attempts(id)
      const droppedAt = yield* Clock.currentTimeMillis
      yield* core.network.dropConnection(id, { kind: "restart", code: "RESTART_REQUIRED", message: "515" })
      yield* letFibersRun
      yield* advanceUntil(statusIs(core, id, "ready"), "1 millis", 200)
      const after = yield* core.attempts(id)
      expect(after).toHaveLength(before.length + 1)
      expect(after.at(-1)!.at - droppedAt).toBeLessThan(5)
      expect(yield* core.statuses(id)).not.toContain("disconnected")
    }))

  it.scoped("stops for good on a fatal close (CONNECTION_REPLACED) and wipes credentials on logged_out", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const replaced = yield* createAndLink(core, "replaced")
      yield* core.network.dropConnection(replaced, { kind: "fatal", code: "CONNECTION_REPLACED", message: "440" })
      yield* advanceUntil(statusIs(core, replaced, "failed"))
      expect((yield* core.sessions.get(replaced)).lastError?.code).toBe("CONNECTION_REPLACED")
      yield* TestClock.adjust("10 minutes")
      yield* letFibersRun
      expect(yield* core.attempts(replaced)).toHaveLength(1)

      const unlinked = yield* createAndLink(core, "unlinked")
      yield* core.network.dropConnection(unlinked, { kind: "logged_out", code: "LOGGED_OUT", message: "401" })
      yield* advanceUntil(statusIs(core, unlinked, "logged_out"))
      // Starting again needs a new QR: the credentials are gone.
      yield* core.supervisor.start(unlinked)
      yield* advanceUntil(statusIs(core, unlinked, "qr_ready"), "1 millis", 500)
    }))

  it.scoped("fails with QR_EXPIRED when nobody scans", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ sandboxPairDelay: Duration.zero, reconnect })
      const session = yield* core.sessions.create({ name: "unscanned" })
      yield* core.supervisor.start(session.id)
      yield* advanceUntil(statusIs(core, session.id, "failed"), "1 second")
      expect((yield* core.sessions.get(session.id)).lastError?.code).toBe("QR_EXPIRED")
      expect((yield* core.sessions.qr(session.id).pipe(Effect.flip))._tag).toBe("Conflict")
    }))

  it.scoped("hands the session's proxy URL, credentials included, to the engine on every connect", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const session = yield* core.sessions.create({ name: "proxied", proxy: { url: "socks5://u:pw@127.0.0.1:1080" } })
      expect(session.proxy?.url).toBe("socks5://u:***@127.0.0.1:1080")
      yield* core.supervisor.start(session.id)
      yield* advanceUntil(statusIs(core, session.id, "ready"))
      expect((yield* core.attempts(session.id)).map((a) => a.proxyUrl)).toEqual(["socks5://u:pw@127.0.0.1:1080"])
      // A changed proxy is used from the next connect on.
      expect(yield* core.sessions.setProxy(session.id, "http://v:pw2@127.0.0.1:3128")).toEqual({ url: "http://v:***@127.0.0.1:3128" })
      yield* core.network.dropConnection(session.id)
      yield* advanceUntil(Effect.map(core.attempts(session.id), (list) => list.length === 2))
      expect((yield* core.attempts(session.id)).map((a) => a.proxyUrl)).toEqual(["socks5://u:pw@127.0.0.1:1080", "http://v:pw2@127.0.0.1:3128"])
    }))

  it.scoped("lets the engine look up what the session sent, by network id (for WhatsApp's retry receipts)", () =>
    Effect.gen(function*() {
      const lookups: Array<ConnectOptions["lookupSent"]> = []
      const core = yield* startCore({ reconnect }, (options) => Effect.sync(() => void lookups.push(options.lookupSent)))
      const id = yield* createAndLink(core, "looked-up")
      const sent = yield* core.messaging.sendText(id, { chatId: "15550005555@c.us" as never, text: "say it again" })
      yield* advanceUntil(Effect.map(core.sentCommands, (commands) => commands.length === 1), "10 millis")
      const networkId = (yield* core.sentCommands)[0]!.engineMessageId
      expect(yield* lookups[0]!(networkId)).toEqual(Option.some({ chatId: "15550005555@c.us", text: "say it again" }))
      expect(yield* lookups[0]!("3EB0-NOT-OURS")).toEqual(Option.none())
      expect((yield* core.messaging.get(id, sent.messageId)).text).toBe("say it again")
    }))

  it.scoped("paces sends: never faster than SEND_RATE_PER_MINUTE, irregularly, and queued rather than refused", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect, pacing: { sendsPerMinute: 6 } })
      const id = yield* createAndLink(core, "paced")
      const sentAt: Array<number> = []
      const accepted = yield* Effect.forEach([1, 2, 3, 4, 5], (n) =>
        core.messaging.sendText(id, { chatId: "15550006666@c.us" as never, text: `burst ${n}` }))
      expect(accepted.every((a) => a.status === "pending")).toBe(true)
      yield* advanceUntil(
        Effect.gen(function*() {
          const commands = yield* core.sentCommands
          while (sentAt.length < commands.length) sentAt.push(yield* Clock.currentTimeMillis)
          return commands.length === 5
        }),
        "500 millis"
      )
      expect((yield* core.sentCommands).map(textOf)).toEqual([1, 2, 3, 4, 5].map((n) => `burst ${n}`))
      // 6 a minute: at least 10 s apart, jittered up to 13 s (+ one clock step).
      const gaps = sentAt.slice(1).map((at, i) => at - sentAt[i]!)
      for (const gap of gaps) {
        expect(gap).toBeGreaterThanOrEqual(10_000)
        expect(gap).toBeLessThanOrEqual(13_500)
      }
      expect(new Set(gaps).size).toBeGreaterThan(1)
    }))

  it.scoped("keeps sends accepted while disconnected and sends them after the reconnect", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const sender = yield* createAndLink(core, "sender")
      const recipient = yield* createAndLink(core, "recipient")
      const phone = (yield* core.sessions.get(recipient)).phone!
      yield* core.network.refuseConnections(sender, Duration.seconds(5))
      yield* core.network.dropConnection(sender)
      yield* advanceUntil(statusIs(core, sender, "disconnected"), "1 millis", 100)
      const accepted = yield* core.messaging.sendText(sender, { chatId: `${phone}@c.us` as never, text: "queued" })
      expect(accepted.status).toBe("pending")
      yield* advanceUntil(statusIs(core, sender, "ready"), "500 millis")
      yield* advanceUntil(
        Effect.map(core.messaging.get(sender, accepted.messageId).pipe(Effect.orDie), (m) => m.status === "delivered"),
        "10 millis"
      )
      const inbox = yield* core.messaging.list(recipient, { direction: "in" }, Option.none())
      expect(inbox.items.map((m) => m.text)).toEqual(["queued"])
    }))
})

describe("SessionSupervisor", () => {
  it.scoped("restarts a crashed actor with backoff while other sessions carry on untouched", () =>
    Effect.gen(function*() {
      const crashesLeft = yield* Ref.make(3)
      let victim = ""
      const core = yield* startCore({ reconnect }, (options) =>
        options.sessionId === victim
          ? Ref.getAndUpdate(crashesLeft, (n) => n - 1).pipe(
            Effect.flatMap((n) => n > 0 ? Effect.die(new Error("engine bug")) : Effect.void)
          )
          : Effect.void)
      const bystander = yield* createAndLink(core, "bystander")
      const friend = yield* createAndLink(core, "friend")
      const friendPhone = (yield* core.sessions.get(friend)).phone!
      const crashing = yield* core.sessions.create({ name: "crashing" })
      victim = crashing.id
      yield* core.supervisor.start(crashing.id)
      yield* letFibersRun
      // While the victim crash-loops, the bystander sends and receives as usual.
      const sent = yield* core.messaging.sendText(bystander, { chatId: `${friendPhone}@c.us` as never, text: "unaffected" })
      yield* advanceUntil(
        Effect.map(core.messaging.get(bystander, sent.messageId).pipe(Effect.orDie), (m) => m.status === "delivered"),
        "10 millis"
      )
      expect((yield* core.sessions.get(bystander)).status).toBe("ready")
      expect(yield* core.attempts(bystander)).toHaveLength(1)
      // The victim is restarted with growing delays and links once the crashes stop.
      yield* advanceUntil(statusIs(core, crashing.id, "ready"), "100 millis")
      const attempts = yield* core.attempts(crashing.id)
      expect(attempts).toHaveLength(4)
      const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i]!.at)
      expect(gaps[1]!).toBeGreaterThan(gaps[0]!)
      expect(yield* core.supervisor.running).toEqual(expect.arrayContaining([bystander, friend, crashing.id]))
      // The crashes show on the session, not only in the log.
      expect((yield* core.sessions.get(crashing.id)).lastError).toMatchObject({ code: "ACTOR_CRASHED", message: expect.stringContaining("engine bug") })
    }))

  it.scoped("restarts a crashed actor even when the Store refuses to record the crash", () =>
    Effect.gen(function*() {
      let victim = ""
      const crashed = yield* Ref.make(false)
      const core = yield* startCore({ reconnect }, (options) =>
        options.sessionId === victim
          ? Ref.getAndSet(crashed, true).pipe(Effect.flatMap((before) => before ? Effect.void : Effect.die(new Error("engine bug"))))
          : Effect.void)
      // The Store fails the one write that records the crash (the status stays, the error turns ACTOR_CRASHED).
      const sql = Context.get(core.context, SqlClient.SqlClient)
      yield* sql.unsafe(`CREATE TRIGGER refuse_crash_record BEFORE UPDATE OF last_error ON sessions
        WHEN NEW.status = OLD.status AND NEW.last_error LIKE '%ACTOR_CRASHED%'
        BEGIN SELECT RAISE(ABORT, 'the Store is down'); END`)
      const crashing = yield* core.sessions.create({ name: "crashing-unrecorded" })
      victim = crashing.id
      yield* core.supervisor.start(crashing.id)
      // Supervision goes on: the actor is restarted and links.
      yield* advanceUntil(statusIs(core, crashing.id, "ready"), "100 millis", 600)
      expect(yield* core.attempts(crashing.id)).toHaveLength(2)
      expect(yield* core.supervisor.running).toContain(crashing.id)
    }))

  it.scoped("what a session's actor logs names the session", () =>
    Effect.gen(function*() {
      // The actors' fibers are forked with this fiber's loggers.
      const logged: Array<{ readonly message: string; readonly sessionId: unknown }> = []
      yield* Effect.locallyScopedWith(FiberRef.currentLoggers, HashSet.add(Logger.make(({ annotations, message }) => {
        logged.push({ message: String(message), sessionId: Option.getOrUndefined(HashMap.get(annotations, "sessionId")) })
      })))
      const core = yield* startCore({ reconnect })
      const sessionId = yield* createAndLink(core, "logs-its-name")
      // The Store refuses the session's next status, and the actor says it waits for it.
      const sql = Context.get(core.context, SqlClient.SqlClient)
      yield* sql.unsafe(`CREATE TRIGGER refuse_status BEFORE UPDATE ON sessions
        BEGIN SELECT RAISE(ABORT, 'the Store is down'); END`)
      const waits = () => logged.filter(({ message }) => message.includes("recording the status disconnected"))
      yield* core.network.dropConnection(sessionId)
      yield* advanceUntil(Effect.sync(() => waits().length > 0), "100 millis", 100)
      yield* sql.unsafe(`DROP TRIGGER refuse_status`)
      expect(waits().map((wait) => wait.sessionId)).toEqual(waits().map(() => sessionId))
      yield* advanceUntil(statusIs(core, sessionId, "ready"), "100 millis", 600)
    }))

  it.scoped("stops a session whose network is waiting for the Store, instead of hanging", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const sender = yield* createAndLink(core, "sends-during-outage")
      const recipient = yield* createAndLink(core, "receives-during-outage")
      const recipientPhone = (yield* core.sessions.get(recipient)).phone!
      // The sandbox network cannot let go of what it holds for the recipient: the Store refuses it.
      const sql = Context.get(core.context, SqlClient.SqlClient)
      yield* sql.unsafe(`CREATE TRIGGER refuse_release BEFORE DELETE ON sandbox_held_events
        BEGIN SELECT RAISE(ABORT, 'the Store is down'); END`)
      yield* core.messaging.sendText(sender, { chatId: `${recipientPhone}@c.us` as never, text: "held" })
      for (let step = 0; step < 20; step++) yield* Effect.zipRight(TestClock.adjust("100 millis"), letFibersRun)
      // The recipient's network step now waits for the Store; stopping the session still ends it.
      const stopping = yield* Effect.fork(core.supervisor.stop(recipient))
      yield* advanceUntil(Effect.map(Fiber.poll(stopping), Option.isSome), "100 millis", 300)
      expect((yield* core.sessions.get(recipient)).status).toBe("stopped")
    }))

  it.scoped("stops, restarts and deletes sessions, and restore starts only those that were running", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ reconnect })
      const running = yield* createAndLink(core, "keeps-running")
      const stopped = yield* createAndLink(core, "gets-stopped")
      const removed = yield* createAndLink(core, "gets-removed")
      yield* core.supervisor.stop(stopped)
      expect((yield* core.sessions.get(stopped)).status).toBe("stopped")
      yield* core.supervisor.remove(removed)
      expect(yield* core.sessions.get(removed).pipe(Effect.flip)).toMatchObject({ code: "SESSION_NOT_FOUND" })
      expect([...(yield* core.supervisor.running)].sort()).toEqual([running])
      // Sessions that ended on their own (failed, unlinked from the phone) stay ended too.
      const replaced = yield* createAndLink(core, "gets-replaced")
      yield* core.network.dropConnection(replaced, { kind: "fatal", code: "CONNECTION_REPLACED", message: "440" })
      yield* advanceUntil(statusIs(core, replaced, "failed"))
      const unlinked = yield* createAndLink(core, "gets-unlinked")
      yield* core.network.dropConnection(unlinked, { kind: "logged_out", code: "LOGGED_OUT", message: "401" })
      yield* advanceUntil(statusIs(core, unlinked, "logged_out"))
      // Unlinked means no account: /me is a 409 and the number is gone.
      expect(yield* core.sessions.me(unlinked).pipe(Effect.flip)).toMatchObject({ code: "SESSION_NOT_READY" })
      expect((yield* core.sessions.get(unlinked)).phone).toBeNull()
      // restore is idempotent for the running one and leaves every ended one alone.
      expect(yield* core.supervisor.restore).toBe(1)
      expect([...(yield* core.supervisor.running)]).toEqual([running])
    }))

  it.live("answers every caller when a session stops: concurrent stops return at once, queued commands are refused", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ sandboxPairDelay: Duration.millis(10), reconnect })
      const session = yield* core.sessions.create({ name: "stopping", autoStart: true })
      yield* core.awaitStatus(session.id, "ready")
      const started = Date.now()
      const [first, second, receipt] = yield* Effect.all([
        core.supervisor.stop(session.id),
        core.supervisor.stop(session.id),
        core.supervisor.useConnection(session.id, engineCall("MarkRead", { chatId: "15550001111@c.us", engineMessageIds: ["x"] })).pipe(Effect.either)
      ], { concurrency: "unbounded" })
      expect([first, second]).toEqual([undefined, undefined])
      expect(Date.now() - started).toBeLessThan(2_000)
      // The receipt either went out before the stop or was refused; it never hangs.
      if (receipt._tag === "Left") expect(receipt.left.code).toBe("SESSION_NOT_READY")
      expect((yield* core.sessions.get(session.id)).status).toBe("stopped")
      expect((yield* core.supervisor.useConnection(session.id, engineCall("MarkRead", { chatId: "15550001111@c.us", engineMessageIds: ["x"] })).pipe(Effect.flip)).code).toBe("SESSION_NOT_READY")
    }).pipe(Effect.scoped))

  it.live("announces message.sent when the network takes the message, then acks as it moves on", () =>
    Effect.gen(function*() {
      const core = yield* startCore({ sandboxPairDelay: Duration.millis(10), reconnect })
      const session = yield* core.sessions.create({ name: "announcer", autoStart: true })
      yield* core.awaitStatus(session.id, "ready")
      const first = yield* core.messaging.sendText(session.id, { chatId: "15550004444@c.us" as never, text: "first" })
      const reply = yield* core.messaging.sendText(session.id, {
        chatId: "15550004444@c.us" as never,
        text: "a reply",
        quotedMessageId: first.messageId,
        mentions: ["15550004444@c.us" as never]
      })
      const kinds = (events: ReadonlyArray<{ event: string; data: unknown }>) =>
        events.filter((e) => JSON.stringify(e.data).includes(reply.messageId)).map((e) => e.event)
      const seen = yield* core.events(session.id).pipe(
        Effect.filterOrFail((events) => kinds(events).length >= 4),
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeout("5 seconds")
      )
      expect(kinds(seen)).toEqual(["message.sent", "message.ack", "message.ack", "message.ack"])
      const sentEvent = seen.find((e) => e.event === "message.sent" && JSON.stringify(e.data).includes(reply.messageId))!
      expect(sentEvent.data).toMatchObject({ message: { id: reply.messageId, status: "sent", fromMe: true } })
      // The quote and the mentions reach the engine, the quote by the network's id of the quoted message, with its text.
      const commands = yield* core.sentCommands
      const quoted = commands.find((c) => textOf(c) === "first")!
      expect(commands.find((c) => textOf(c) === "a reply")).toMatchObject({
        quoted: { engineMessageId: quoted.engineMessageId, fromMe: true, type: "text", text: "first" },
        mentions: ["15550004444@c.us"]
      })
    }).pipe(Effect.scoped))

  it.live("resumes, after a restart on the same data, the messages that were accepted but not yet sent", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      const settings = { dataDir, databaseUrl: `sqlite:${dataDir}/sb.db`, sandboxPairDelay: Duration.millis(20), reconnect }
      const { sender, accepted } = yield* Effect.scoped(Effect.gen(function*() {
        const core = yield* startCore(settings)
        const session = yield* core.sessions.create({ name: "resumer", autoStart: true })
        yield* core.awaitStatus(session.id, "ready")
        // The connection is down and stays down: the message waits as `pending`.
        yield* core.network.refuseConnections(session.id, Duration.hours(1))
        yield* core.network.dropConnection(session.id)
        yield* core.awaitStatus(session.id, "disconnected")
        const accepted = yield* core.messaging.sendText(session.id, { chatId: "15550003333@c.us" as never, text: "survives" })
        return { sender: session.id, accepted }
      }))
      // A new process on the same data: the session is restored and the message goes out.
      const core = yield* startCore(settings)
      yield* core.awaitStatus(sender, "ready")
      const delivered = yield* core.messaging.get(sender, accepted.messageId).pipe(
        Effect.filterOrFail((m) => m.status === "read"),
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeout("5 seconds")
      )
      expect(delivered.statusHistory.map((h) => h.status)).toEqual(["pending", "sent", "delivered", "read"])
      // The echo contact's reply comes after the read receipt: it is waited for, not raced.
      const chat = yield* core.messaging.list(sender, { chatId: "15550003333@c.us", direction: "in" }, Option.none()).pipe(
        Effect.filterOrFail((page) => page.items.length > 0),
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeout("5 seconds")
      )
      expect(chat.items.map((m) => m.text)).toEqual(["survives"])
    }).pipe(Effect.scoped))
})
