import { describe, expect, it, layer } from "@effect/vitest"
import { SessionNameTaken } from "../src/domain/Errors.js"
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Either, Exit, Layer, Option } from "effect"
import { join } from "node:path"
import { EngineEvent } from "../src/runtime/Engine.js"
import { SandboxLedger } from "../src/runtime/engines/sandbox/Ledger.js"
import { migrations, parseDatabaseUrl, RepositoriesLive, SqlSandboxLedgerAlone, storeLayerFromUrl } from "../src/layers/store/index.js"
import { AuthRepo } from "../src/runtime/ports/store/AuthRepo.js"
import { ChatRepo } from "../src/runtime/ports/store/ChatRepo.js"
import { MessageRepo, type MessageRow } from "../src/runtime/ports/store/MessageRepo.js"
import { SessionRepo, type SessionRow } from "../src/runtime/ports/store/SessionRepo.js"
import { messageRow, sessionRow } from "./support/fixtures.js"
import { storeBackends } from "./support/storeBackends.js"

/** The Store on a database URL (the same URL again reopens the same database). */
const storeAt = (url: string) => RepositoriesLive.pipe(Layer.provideMerge(storeLayerFromUrl(url)))

/** The sandbox network's SQL ledger on a database URL. */
const ledgerAt = (url: string) => Layer.provide(SqlSandboxLedgerAlone, storeLayerFromUrl(url))

/** The keys of what the ledger at that URL holds for a session, in arrival order. */
const heldRows = (url: string, sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event_key: string }>`SELECT event_key FROM sandbox_held_events WHERE session_id = ${sessionId} ORDER BY seq`
  ).pipe(Effect.map((rows) => rows.map((row) => row.event_key)), Effect.provide(storeLayerFromUrl(url)))

const session = sessionRow

const message = messageRow

const insertSession = (overrides: Partial<SessionRow> = {}) =>
  Effect.gen(function*() {
    const row = session(overrides)
    yield* (yield* SessionRepo).insert(row)
    return row
  })

describe("database URLs", () => {
  it("parses database URLs", () => {
    expect(parseDatabaseUrl("sqlite:/var/lib/sb.db")).toEqual(Either.right({ kind: "sqlite", filename: "/var/lib/sb.db" }))
    expect(parseDatabaseUrl("sqlite://data/sb.db")).toEqual(
      Either.right({ kind: "sqlite", filename: join(process.cwd(), "data/sb.db") })
    )
    expect(parseDatabaseUrl("file:///tmp/sb.db")).toEqual(Either.right({ kind: "sqlite", filename: "/tmp/sb.db" }))
    expect(parseDatabaseUrl("file:./sb.db")).toEqual(Either.right({ kind: "sqlite", filename: join(process.cwd(), "sb.db") }))
    expect(parseDatabaseUrl("postgres://u:p@db:5432/sb")).toEqual(Either.right({ kind: "postgres", url: "postgres://u:p@db:5432/sb" }))
    expect(parseDatabaseUrl(" postgresql://u@db/sb?sslmode=require ")).toEqual(
      Either.right({ kind: "postgres", url: "postgresql://u@db/sb?sslmode=require" })
    )
    expect(Either.isLeft(parseDatabaseUrl("mysql://x"))).toBe(true)
  })

  it.effect("a Postgres that cannot be reached fails the Store with a SqlError, not a hang", () =>
    Effect.gen(function*() {
      // Port 1 on loopback: nothing listens, the connection is refused at once.
      const exit = yield* Effect.exit(Layer.build(storeLayerFromUrl("postgres://nobody@127.0.0.1:1/none")).pipe(Effect.scoped))
      expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toEqual(Option.some(expect.objectContaining({ _tag: "SqlError" })))
    }))
})

/** Every test below runs twice: on a SQLite file and on a Postgres database. */
for (const backend of storeBackends("store.test.ts")) {
  describe.skipIf(backend.skip)(`Store on ${backend.name}`, () => {
    it.effect("runs migrations once: reopening the same database keeps the data", () =>
      Effect.gen(function*() {
        const file = yield* backend.freshUrl
        const row = session()
        yield* SessionRepo.pipe(Effect.flatMap((sessions) => sessions.insert(row)), Effect.provide(storeAt(file)))
        const reopened = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const applied = yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM effect_sql_migrations`
          return { applied, found: yield* (yield* SessionRepo).findById(row.id) }
        }).pipe(Effect.provide(storeAt(file)))
        // Each migration applied exactly once, however often the database is opened.
        const known = (yield* migrations).map(([id]) => id)
        expect(reopened.applied.map((m) => m.migration_id)).toEqual(known)
        expect(reopened.found).toEqual(Option.some(row))
      }))

    it.effect("gateways opening a new database at once migrate it once, without tripping over each other", () =>
      Effect.gen(function*() {
        const url = yield* backend.freshUrl
        const open = Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM effect_sql_migrations`
        }).pipe(Effect.provide(storeAt(url)))
        const opened = yield* Effect.all([open, open, open], { concurrency: "unbounded" })
        const known = (yield* migrations).map(([id]) => id)
        for (const applied of opened) expect(applied.map((m) => Number(m.migration_id))).toEqual(known)
      }))

    // `layer`, not `it.layer`: after one `it.layer` block, @effect/vitest's `it.layer` nests in that block's
    // layer (its `it` is mutated), so the second backend would reuse the first one's repositories.
    layer(backend.repositories())("on one database", (it) => {
      it.effect("sessions: insert, duplicate name, update, remove", () =>
        Effect.gen(function*() {
          const sessions = yield* SessionRepo
          const row = yield* insertSession({ name: "main" })
          expect(yield* sessions.findByName("main")).toEqual(Option.some(row))

          const duplicate = yield* Effect.flip(sessions.insert(session({ name: "main" })))
          expect(duplicate).toBeInstanceOf(SessionNameTaken)
          expect(duplicate.name).toBe("main")

          const lastError = { code: "ENGINE_FAILURE", message: "boom", at: "2024-01-02T00:00:00.000Z" }
          const updated = yield* sessions.update(row.id, { status: "ready", desiredRunning: true, phone: "1555", lastError })
          expect(updated).toEqual(Option.some({
            ...row,
            status: "ready",
            desiredRunning: true,
            phone: "1555",
            lastError,
            updatedAt: Option.getOrThrow(updated).updatedAt
          }))
          expect(Option.getOrThrow(updated).updatedAt).not.toEqual(row.updatedAt)
          expect(yield* sessions.update("missing", { status: "ready" })).toEqual(Option.none())
          expect((yield* sessions.listDesiredRunning()).map((s) => s.id)).toContain(row.id)

          const messages = yield* MessageRepo
          const auth = (yield* AuthRepo).forSession(row.id)
          // Foreign keys are on: a message needs its session.
          expect(Exit.isFailure(yield* Effect.exit(messages.insert(message("no-such-session", "orphan"))))).toBe(true)
          yield* messages.insert(message(row.id, `${row.id}-m1`))
          yield* messages.updateStatus(`${row.id}-m1`, "failed", "2024-02-01T00:00:01.000Z", { code: "X", message: "y" })
          yield* auth.writeCreds({ me: "someone" })

          expect(yield* sessions.remove(row.id)).toBe(true)
          expect(yield* sessions.remove(row.id)).toBe(false)
          expect(yield* sessions.findById(row.id)).toEqual(Option.none())
          expect(yield* messages.countBySession(row.id)).toBe(0)
          expect(yield* auth.readCreds).toEqual(Option.none())
          const sql = yield* SqlClient.SqlClient
          const history = yield* sql`SELECT * FROM message_status_history WHERE message_id = ${`${row.id}-m1`}`
          expect(history).toEqual([])
        }))

      it.effect("sessions: list filters by status, oldest first, pages with a total", () =>
        Effect.gen(function*() {
          const sessions = yield* SessionRepo
          const stopped = [
            yield* insertSession({ status: "stopped" }),
            yield* insertSession({ status: "stopped" }),
            yield* insertSession({ status: "stopped" })
          ]
          yield* insertSession({ status: "failed" })

          const all = yield* sessions.list({ status: "stopped" }, Option.none())
          expect(all).toEqual({ items: stopped, total: 3 })
          const second = yield* sessions.list({ status: "stopped" }, Option.some({ page: 2, limit: 2 }))
          expect(second).toEqual({ items: [stopped[2]], total: 3 })
          const beyond = yield* sessions.list({ status: "stopped" }, Option.some({ page: 5, limit: 2 }))
          expect(beyond).toEqual({ items: [], total: 3 })
        }))

      it.effect("auth: creds, keys, Buffer round-trip, clear", () =>
        Effect.gen(function*() {
          const { id } = yield* insertSession()
          const auth = (yield* AuthRepo).forSession(id)
          expect(yield* auth.readCreds).toEqual(Option.none())

          const creds = { noiseKey: { private: Buffer.from([1, 2, 3]), public: new Uint8Array([250, 251]) }, registered: true }
          yield* auth.writeCreds(creds)
          const read = Option.getOrThrow(yield* auth.readCreds) as typeof creds
          expect(Buffer.isBuffer(read.noiseKey.private)).toBe(true)
          expect([...read.noiseKey.private]).toEqual([1, 2, 3])
          expect([...read.noiseKey.public]).toEqual([250, 251])
          expect(read.registered).toBe(true)

          yield* auth.setKeys({ "pre-key": { "1": { key: Buffer.from("one") }, "2": { key: Buffer.from("two") } } })
          yield* auth.setKeys({ "pre-key": { "1": null, "2": { key: Buffer.from("deux") } }, session: { a: "state" } })
          const preKeys = yield* auth.getKeys("pre-key", ["1", "2", "3"])
          expect(Object.keys(preKeys)).toEqual(["2"])
          expect((preKeys["2"] as { key: Buffer }).key.toString()).toBe("deux")
          expect(yield* auth.getKeys("session", ["a"])).toEqual({ a: "state" })
          expect(yield* auth.getKeys("session", [])).toEqual({})

          yield* auth.clear
          expect(yield* auth.readCreds).toEqual(Option.none())
          expect(yield* auth.getKeys("pre-key", ["2"])).toEqual({})
        }))

      it.effect("auth: setKeys is atomic — a failing change leaves nothing written", () =>
        Effect.gen(function*() {
          const { id } = yield* insertSession()
          const auth = (yield* AuthRepo).forSession(id)
          yield* auth.setKeys({ "pre-key": { kept: "before" } })
          // The first type's statements run, then the second type's value cannot be stored.
          const exit = yield* Effect.exit(auth.setKeys({
            "pre-key": { kept: null, added: "new" },
            session: { broken: () => "functions have no JSON form" }
          }))
          expect(Exit.isFailure(exit)).toBe(true)
          expect(yield* auth.getKeys("pre-key", ["kept", "added"])).toEqual({ kept: "before" })
        }))

      it.effect("messages: statuses only advance, history in order, listUnsent", () =>
        Effect.gen(function*() {
          const { id: sessionId } = yield* insertSession()
          const messages = yield* MessageRepo
          yield* messages.insert(message(sessionId, "out-1", { engineMessageId: "E-1" }))
          yield* messages.insert(message(sessionId, "out-2", { createdAt: "2024-02-01T00:00:05.000Z" }))
          yield* messages.insert(message(sessionId, "in-1", { fromMe: false, status: "delivered", ack: 2, engineMessageId: "E-in" }))
          expect((yield* messages.listUnsent(sessionId)).map((m) => m.id)).toEqual(["out-1", "out-2"])

          const sent = Option.getOrThrow(yield* messages.updateStatus("out-1", "sent", "2024-02-01T00:00:01.000Z"))
          expect(sent.previousStatus).toBe("pending")
          expect(sent.row).toMatchObject({ status: "sent", ack: 1, engineMessageId: "E-1" })
          expect(Option.getOrThrow(yield* messages.findByEngineId(sessionId, "E-1")).id).toBe("out-1")
          // What message.sent carries, built from the transition, is the message as stored.
          expect((yield* messages.leftPendingAll([sent]))[0]).toEqual(Option.getOrThrow(yield* messages.findById(sessionId, "out-1")))
          expect((yield* messages.listUnsent(sessionId)).map((m) => m.id)).toEqual(["out-2"])

          const read = yield* messages.updateStatus("out-1", "read", "2024-02-01T00:00:03.000Z")
          expect(Option.map(read, (t) => [t.previousStatus, t.row.status, t.row.ack])).toEqual(Option.some(["sent", "read", 3]))
          expect(yield* messages.updateStatus("out-1", "delivered", "2024-02-01T00:00:04.000Z")).toEqual(Option.none())
          expect(yield* messages.updateStatus("out-1", "read", "2024-02-01T00:00:04.000Z")).toEqual(Option.none())
          expect(yield* messages.updateStatus("missing", "read", "2024-02-01T00:00:04.000Z")).toEqual(Option.none())

          const found = Option.getOrThrow(yield* messages.findById(sessionId, "out-1"))
          expect(found).toMatchObject({ status: "read", ack: 3, media: null, reactions: [] })
          expect(found.statusHistory).toEqual([
            { status: "pending", at: "2024-02-01T00:00:00.000Z" },
            { status: "sent", at: "2024-02-01T00:00:01.000Z" },
            { status: "read", at: "2024-02-01T00:00:03.000Z" }
          ])
          expect(yield* messages.findById("another-session", "out-1")).toEqual(Option.none())

          const failed = yield* messages.updateStatus("out-2", "failed", "2024-02-01T00:00:06.000Z", { code: "E", message: "no" })
          expect(Option.map(failed, (t) => t.row.error)).toEqual(Option.some({ code: "E", message: "no" }))
          expect(yield* messages.updateStatus("out-2", "sent", "2024-02-01T00:00:07.000Z")).toEqual(Option.none())

          // A receipt by engine id that skips `sent` (an engine with no server ack), on a message someone reacted to.
          yield* messages.insert(message(sessionId, "out-3", { engineMessageId: "E-3" }))
          yield* messages.setReaction("out-3", "15550000001@c.us", "👍", "2024-02-01T00:00:08.000Z")
          const delivered = Option.getOrThrow((yield* messages.updateStatusesByEngineId(sessionId, [{ engineMessageId: "E-3", status: "delivered" }], "2024-02-01T00:00:09.000Z"))[0]!)
          expect([delivered.previousStatus, delivered.row.status, delivered.row.ack]).toEqual(["pending", "delivered", 2])
          expect((yield* messages.leftPendingAll([delivered]))[0]).toEqual(Option.getOrThrow(yield* messages.findById(sessionId, "out-3")))
          expect(yield* messages.updateStatusesByEngineId(sessionId, [{ engineMessageId: "E-3", status: "sent" }], "2024-02-01T00:00:10.000Z")).toEqual([Option.none()])
        }))

      it.effect("messages: receipts applied together move each message as one after another would", () =>
        Effect.gen(function*() {
          const { id: sessionId } = yield* insertSession()
          const messages = yield* MessageRepo
          for (const id of ["r-1", "r-2", "r-3"]) yield* messages.insert(message(sessionId, id, { engineMessageId: `E-${id}` }))
          // Two rows with one engine id: a receipt moves the first, as `findByEngineId` reads it.
          yield* messages.insert(message(sessionId, "r-twin", { engineMessageId: "E-r-1", createdAt: "2024-02-01T00:00:01.000Z" }))
          const at = "2024-02-01T00:00:09.000Z"
          const moves = yield* messages.updateStatusesByEngineId(sessionId, [
            { engineMessageId: "E-r-1", status: "sent" },
            { engineMessageId: "E-r-2", status: "read" },
            { engineMessageId: "E-r-1", status: "delivered" },
            { engineMessageId: "E-r-1", status: "sent" },
            { engineMessageId: "E-unknown", status: "sent" },
            { engineMessageId: "E-r-3", status: "failed", error: { code: "E", message: "no" } }
          ], at)
          expect(moves.map((move) => Option.map(move, ({ previousStatus, row }) => [row.id, previousStatus, row.status]))).toEqual([
            Option.some(["r-1", "pending", "sent"]),
            Option.some(["r-2", "pending", "read"]),
            Option.some(["r-1", "sent", "delivered"]),
            Option.none(),
            Option.none(),
            Option.some(["r-3", "pending", "failed"])
          ])
          const lifeOf = (id: string) =>
            Effect.map(messages.findById(sessionId, id), (found) =>
              Option.map(found, (m) => [m.status, m.ack, m.error, m.statusHistory.map((h) => h.status).join(">")]))
          expect(yield* lifeOf("r-1")).toEqual(Option.some(["delivered", 2, null, "pending>sent>delivered"]))
          expect(yield* lifeOf("r-2")).toEqual(Option.some(["read", 3, null, "pending>read"]))
          expect(yield* lifeOf("r-3")).toEqual(Option.some(["failed", -1, { code: "E", message: "no" }, "pending>failed"]))
          expect(yield* lifeOf("r-twin")).toEqual(Option.some(["pending", 0, null, "pending"]))
          // What message.sent carries for each, read together, is each message as stored then.
          const [first, second] = yield* messages.leftPendingAll([Option.getOrThrow(moves[1]!), Option.getOrThrow(moves[5]!)])
          expect(first).toEqual(Option.getOrThrow(yield* messages.findById(sessionId, "r-2")))
          expect(second).toEqual(Option.getOrThrow(yield* messages.findById(sessionId, "r-3")))
        }))

      it.effect("messages: list is newest first, filtered, and pages root records (rule 11)", () =>
        Effect.gen(function*() {
          const { id: sessionId } = yield* insertSession()
          const messages = yield* MessageRepo
          const at = (minute: number) => `2024-03-01T00:0${minute}:00.000Z`
          for (const minute of [1, 2, 3, 4, 5]) {
            const id = `m${minute}`
            const inbound = minute === 5
            yield* messages.insert(message(sessionId, id, {
              timestamp: at(minute),
              createdAt: at(minute),
              fromMe: !inbound,
              status: inbound ? "delivered" : "pending",
              chatId: minute === 4 ? "other@c.us" : "15550000001@c.us"
            }))
            if (inbound) continue
            // Several history rows per message: a join-then-limit would return fewer messages.
            yield* messages.updateStatus(id, "sent", at(minute))
            yield* messages.updateStatus(id, "delivered", at(minute))
          }

          const ids = (page: { readonly items: ReadonlyArray<{ readonly id: string }> }) => page.items.map((m) => m.id)
          const all = yield* messages.list(sessionId, {}, Option.none())
          expect([ids(all), all.total]).toEqual([["m5", "m4", "m3", "m2", "m1"], 5])

          const first = yield* messages.list(sessionId, {}, Option.some({ page: 1, limit: 2 }))
          expect([ids(first), first.total]).toEqual([["m5", "m4"], 5])
          expect(first.items[0]!.statusHistory.map((h) => h.status)).toEqual(["delivered"])
          expect(first.items[1]!.statusHistory.map((h) => h.status)).toEqual(["pending", "sent", "delivered"])
          const third = yield* messages.list(sessionId, {}, Option.some({ page: 3, limit: 2 }))
          expect([ids(third), third.total]).toEqual([["m1"], 5])

          const list = (filter: Parameters<typeof messages.list>[1]) =>
            Effect.map(messages.list(sessionId, filter, Option.none()), ids)
          expect(yield* list({ direction: "in" })).toEqual(["m5"])
          expect(yield* list({ direction: "out", chatId: "15550000001@c.us" })).toEqual(["m3", "m2", "m1"])
          expect(yield* list({ since: at(2), until: at(4) })).toEqual(["m4", "m3", "m2"])
          expect(yield* list({ status: "pending" })).toEqual([])
          expect(yield* list({ status: "delivered", chatId: "other@c.us" })).toEqual(["m4"])
          const filtered = yield* messages.list(sessionId, { direction: "out" }, Option.some({ page: 1, limit: 3 }))
          expect([ids(filtered), filtered.total]).toEqual([["m4", "m3", "m2"], 4])
        }))

      it.effect("reactions: one per person, changed in place, taken back with \"\"", () =>
        Effect.gen(function*() {
          const { id: sessionId } = yield* insertSession()
          const messages = yield* MessageRepo
          yield* messages.insert(message(sessionId, "target"))
          const reactionsOf = Effect.map(messages.findById(sessionId, "target"), (m) => Option.getOrThrow(m).reactions)

          expect(yield* messages.setReaction("target", "a@c.us", "👍", "2024-03-01T00:00:01.000Z")).toBe(true)
          expect(yield* messages.setReaction("target", "b@c.us", "🎉", "2024-03-01T00:00:02.000Z")).toBe(true)
          expect(yield* messages.setReaction("target", "a@c.us", "👍", "2024-03-01T00:00:03.000Z")).toBe(false)
          expect(yield* messages.setReaction("target", "a@c.us", "❤️", "2024-03-01T00:00:04.000Z")).toBe(true)
          expect(yield* reactionsOf).toEqual([
            { emoji: "🎉", from: "b@c.us", at: "2024-03-01T00:00:02.000Z" },
            { emoji: "❤️", from: "a@c.us", at: "2024-03-01T00:00:04.000Z" }
          ])
          expect(yield* messages.setReaction("target", "b@c.us", "", "2024-03-01T00:00:05.000Z")).toBe(true)
          expect(yield* messages.setReaction("target", "b@c.us", "", "2024-03-01T00:00:06.000Z")).toBe(false)
          expect((yield* reactionsOf).map((r) => r.from)).toEqual(["a@c.us"])
        }))

      it.effect("messages with many reactions: a page holds exactly `limit` messages, each with all its reactions (rule 11)", () =>
        Effect.gen(function*() {
          const { id: sessionId } = yield* insertSession()
          const messages = yield* MessageRepo
          const reactors = Array.from({ length: 12 }, (_, i) => `1555999${String(i).padStart(4, "0")}@c.us`)
          for (const minute of [1, 2, 3, 4, 5, 6, 7]) {
            const at = `2024-03-01T00:0${minute}:00.000Z`
            yield* messages.insert(message(sessionId, `r${minute}`, { timestamp: at, createdAt: at }))
            for (const from of reactors) yield* messages.setReaction(`r${minute}`, from, "👍", at)
          }
          const seen: Array<string> = []
          for (const [page, expected] of [[1, ["r7", "r6", "r5"]], [2, ["r4", "r3", "r2"]], [3, ["r1"]]] as const) {
            const listed = yield* messages.list(sessionId, {}, Option.some({ page, limit: 3, offset: (page - 1) * 3 }))
            expect(listed.items.map((m) => m.id)).toEqual(expected)
            expect(listed.total).toBe(7)
            for (const item of listed.items) expect(item.reactions).toHaveLength(12)
            seen.push(...listed.items.map((m) => m.id))
          }
          expect(new Set(seen).size).toBe(7)
        }))

      it.effect("chats: kept from the messages, unread counted as WhatsApp does, paged on chats whatever their labels", () =>
        Effect.gen(function*() {
          const { id: sessionId } = yield* insertSession()
          const messages = yield* MessageRepo
          const chats = yield* ChatRepo
          const at = (minute: number) => `2024-04-01T00:${String(minute).padStart(2, "0")}:00.000Z`
          const write = (id: string, chatId: string, minute: number, overrides: Partial<MessageRow> = {}) =>
            messages.insert(message(sessionId, id, { chatId, timestamp: at(minute), createdAt: at(minute), updatedAt: at(minute), ...overrides }))
          const unreadOf = (chatId: string) => Effect.map(chats.find(sessionId, chatId), (chat) => Option.getOrThrow(chat).unreadCount)
          const friend = "15550000101@c.us"

          yield* write("in1", friend, 1, { fromMe: false, status: "delivered" })
          yield* write("in2", friend, 2, { fromMe: false, status: "delivered" })
          expect(yield* unreadOf(friend)).toBe(2)
          // An older message from the history neither counts nor becomes the last one.
          yield* write("old", friend, 0, { fromMe: false, status: "read", source: "history" })
          expect(Option.getOrThrow(yield* chats.find(sessionId, friend))).toMatchObject({ unreadCount: 2, lastMessage: { id: "in2" } })
          yield* write("out1", friend, 3)
          expect(yield* unreadOf(friend)).toBe(0)
          yield* chats.update(sessionId, friend, { unreadCount: -1 }, at(4))
          yield* write("in3", friend, 5, { fromMe: false, status: "delivered" })
          expect(yield* unreadOf(friend)).toBe(1)
          yield* write("story", "status@broadcast", 6, { fromMe: false })
          expect(Option.isNone(yield* chats.find(sessionId, "status@broadcast"))).toBe(true)

          const sql = yield* SqlClient.SqlClient
          const others = ["15550000102@c.us", "15550000103@c.us", "120363000000000104@g.us"]
          for (const [i, chatId] of others.entries()) yield* write(`o${i}`, chatId, 10 + i)
          for (const label of ["l1", "l2", "l3"]) {
            yield* sql`INSERT INTO labels ${sql.insert({ session_id: sessionId, id: label, name: label, color: 0, updated_at: at(0) })}`
            for (const chatId of [friend, ...others]) yield* sql`INSERT INTO chat_labels ${sql.insert({ session_id: sessionId, chat_id: chatId, label_id: label })}`
          }
          const first = yield* chats.list(sessionId, {}, Option.some({ page: 1, limit: 3 }))
          const second = yield* chats.list(sessionId, {}, Option.some({ page: 2, limit: 3 }))
          expect(first.total).toBe(4)
          expect([...first.items, ...second.items].map((chat) => chat.chatId)).toEqual([...others].reverse().concat(friend))
          for (const chat of first.items) expect(chat.labels.map((label) => label.id)).toEqual(["l1", "l2", "l3"])
          expect((yield* chats.list(sessionId, { unread: true }, Option.none())).items.map((chat) => chat.chatId)).toEqual([friend])
          expect((yield* chats.list(sessionId, { type: "group" }, Option.none())).total).toBe(1)

          const removed = Option.getOrThrow(yield* chats.remove(sessionId, friend))
          expect(removed.messagesWithMedia).toEqual([])
          expect((yield* messages.list(sessionId, { chatId: friend }, Option.none())).total).toBe(0)
          expect(Option.isNone(yield* chats.remove(sessionId, friend))).toBe(true)
        }))
    })
  })

  describe.skipIf(backend.skip)(`SqlSandboxLedger on ${backend.name}`, () => {
    const timestamp = new Date("2024-03-01T10:00:00.000Z")
    const receivedFrom = (engineMessageId: string, text: string) =>
      EngineEvent.MessageReceived({
        message: {
          engineMessageId,
          chatId: "999000000001@c.us",
          from: "999000000001@c.us",
          fromPhone: "999000000001@c.us",
          fromLid: null,
          type: "text",
          text,
          timestamp
        }
      })

    it.effect("keeps the sandbox network's memory across reopening the database, dates and order intact", () =>
      Effect.gen(function*() {
        const file = yield* backend.freshUrl
        const received = receivedFrom("SB1", "held")
        const receipt = EngineEvent.MessageStatusChanged({ engineMessageId: "SB0", status: "read" })
        yield* Effect.gen(function*() {
          const ledger = yield* SandboxLedger
          yield* ledger.rememberOwner("999000000002", "bob")
          yield* ledger.rememberOwner("999000000002", "bob-again")
          yield* ledger.hold("bob-again", "status:SB0:read", 8, receipt)
          yield* ledger.hold("bob-again", "msg:SB1", 7, received)
          yield* ledger.hold("bob-again", "msg:SB1", 9, received) // already held: stays at seq 7
          yield* ledger.hold("alice", "status:SB0:read", 10, receipt)
          yield* ledger.release("alice", "status:SB0:read")
          yield* ledger.release("alice", "status:SB0:read") // releasing twice is harmless
          const sentRecord = { senderSessionId: "alice", senderPhone: "999000000001", recipientPhone: "999000000002", timestamp } as const
          // A batch of records, then a later one changing one of them.
          yield* ledger.recordSent([["SB1", { ...sentRecord, status: "sent" }], ["SB3", { ...sentRecord, status: "sent" }]])
          yield* ledger.recordSent([["SB1", { ...sentRecord, status: "delivered" }]])
        }).pipe(Effect.provide(ledgerAt(file)))

        const loaded = yield* Effect.flatMap(SandboxLedger, (ledger) => ledger.load).pipe(Effect.provide(ledgerAt(file)))
        expect(loaded.phoneOwners).toEqual([["999000000002", "bob-again"]])
        expect(loaded.held).toEqual([
          { sessionId: "bob-again", key: "msg:SB1", seq: 7, event: received },
          { sessionId: "bob-again", key: "status:SB0:read", seq: 8, event: receipt }
        ])
        const held = loaded.held[0]!.event
        expect(held._tag === "MessageReceived" && held.message.timestamp).toEqual(timestamp)
        expect([...loaded.sent].sort(([a], [b]) => a.localeCompare(b))).toEqual([
          ["SB1", { senderSessionId: "alice", senderPhone: "999000000001", recipientPhone: "999000000002", timestamp, status: "delivered" }],
          ["SB3", { senderSessionId: "alice", senderPhone: "999000000001", recipientPhone: "999000000002", timestamp, status: "sent" }]
        ])
      }))

    it.effect("holds each event as one row and loads them in seq order", () =>
      Effect.gen(function*() {
        const file = yield* backend.freshUrl
        // Written out of order on purpose: the order is seq's, not the rows'.
        const seqs = Array.from({ length: 50 }, (_, i) => (i * 17) % 50)
        yield* Effect.gen(function*() {
          const ledger = yield* SandboxLedger
          yield* Effect.forEach(seqs, (seq) => ledger.hold("bob", `msg:SB${seq}`, seq, receivedFrom(`SB${seq}`, `text ${seq}`)), { discard: true })
        }).pipe(Effect.provide(ledgerAt(file)))
        expect(yield* heldRows(file, "bob")).toHaveLength(50)

        const loaded = yield* Effect.flatMap(SandboxLedger, (ledger) => ledger.load).pipe(Effect.provide(ledgerAt(file)))
        expect(loaded.held.map((entry) => entry.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i))
        expect(loaded.held.map((entry) => entry.event._tag === "MessageReceived" && entry.event.message.text))
          .toEqual(Array.from({ length: 50 }, (_, i) => `text ${i}`))
      }))

    it.effect("forgetSession drops the session's rows and keeps everyone else's", () =>
      Effect.gen(function*() {
        const file = yield* backend.freshUrl
        const sentBy = (senderSessionId: string) =>
          ({ senderSessionId, senderPhone: "999000000001", recipientPhone: "999000000002", timestamp, status: "sent" }) as const
        const loaded = yield* Effect.gen(function*() {
          const ledger = yield* SandboxLedger
          yield* ledger.rememberOwner("999000000001", "alice")
          yield* ledger.rememberOwner("999000000002", "bob")
          yield* ledger.hold("bob", "msg:SB1", 0, receivedFrom("SB1", "for bob"))
          yield* ledger.hold("alice", "status:SB2:sent", 1, EngineEvent.MessageStatusChanged({ engineMessageId: "SB2", status: "sent" }))
          yield* ledger.recordSent([["SB1", sentBy("alice")], ["SB2", sentBy("bob")]])
          yield* ledger.forgetSession("bob")
          return yield* ledger.load
        }).pipe(Effect.provide(ledgerAt(file)))
        expect(loaded.phoneOwners).toEqual([["999000000001", "alice"]])
        expect(loaded.held.map((entry) => [entry.sessionId, entry.key])).toEqual([["alice", "status:SB2:sent"]])
        expect(loaded.sent.map(([id]) => id)).toEqual(["SB1"])
      }))
  })
}
