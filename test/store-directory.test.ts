import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ChannelRepo } from "../src/runtime/ports/store/ChannelRepo.js"
import { LabelRepo } from "../src/runtime/ports/store/LabelRepo.js"
import { GroupRepo } from "../src/runtime/ports/store/GroupRepo.js"
import { ContactRepo } from "../src/runtime/ports/store/ContactRepo.js"
import { SessionRepo } from "../src/runtime/ports/store/SessionRepo.js"
import type { Group } from "../src/domain/Group.js"
import { sessionRow } from "./support/fixtures.js"
import { storeBackends } from "./support/storeBackends.js"

/** The gateway's copy of each session's groups, channels, labels and contacts, on a SQLite file and on Postgres. */

const newSession = Effect.gen(function*() {
  const row = sessionRow()
  yield* (yield* SessionRepo).insert(row)
  return row.id
})

const group = (id: string, subject: string, members: number): Group => ({
  id,
  subject,
  description: null,
  owner: "15550000000@c.us",
  createdAt: "2024-01-01T00:00:00.000Z",
  announce: false,
  restrict: false,
  memberAddMode: "admins",
  approval: false,
  participants: [
    { id: "15550000000@c.us", role: "superadmin" },
    ...Array.from({ length: members }, (_, i) => ({ id: `1555100${String(i).padStart(4, "0")}@c.us`, role: "member" as const }))
  ]
})

for (const backend of storeBackends("store-directory.test.ts")) {
  describe.skipIf(backend.skip)(`directory repositories on ${backend.name}`, () => {
    // `layer`, not `it.layer`: after one `it.layer` block, @effect/vitest's `it.layer` nests in that block's
    // layer (its `it` is mutated), so the second backend would reuse the first one's repositories.
    layer(backend.repositories())("on one database", (it) => {
      it.effect("groups: a page holds exactly `limit` groups, each with all its participants (rule 11)", () =>
        Effect.gen(function*() {
          const sessionId = yield* newSession
          const groups = yield* GroupRepo
          for (const n of [1, 2, 3, 4, 5]) yield* groups.upsert(sessionId, group(`12036300000${n}@g.us`, `group ${n}`, 15))
          const first = yield* groups.list(sessionId, Option.some({ page: 1, limit: 2 }))
          expect(first.items.map((g) => g.subject)).toEqual(["group 1", "group 2"])
          expect(first.total).toBe(5)
          for (const item of first.items) expect(item.participants).toHaveLength(16)
          const last = yield* groups.list(sessionId, Option.some({ page: 3, limit: 2 }))
          expect(last.items.map((g) => g.subject)).toEqual(["group 5"])
          // Another session's groups are not this one's.
          const other = yield* newSession
          expect((yield* groups.list(other, Option.none())).total).toBe(0)
        }))

      it.effect("groups: participant changes, updates and removal", () =>
        Effect.gen(function*() {
          const sessionId = yield* newSession
          const groups = yield* GroupRepo
          const id = "120363999999@g.us"
          yield* groups.upsert(sessionId, group(id, "before", 1))
          yield* groups.changeParticipants(sessionId, id, ["15552222222@c.us"], "add")
          yield* groups.changeParticipants(sessionId, id, ["15552222222@c.us"], "promote")
          yield* groups.changeParticipants(sessionId, id, ["15551000000@c.us"], "remove")
          yield* groups.update(sessionId, id, { subject: "after", description: "about", announce: true })
          const found = Option.getOrThrow(yield* groups.find(sessionId, id))
          expect(found).toMatchObject({ subject: "after", description: "about", announce: true, restrict: false })
          expect(found.participants).toEqual([
            { id: "15550000000@c.us", role: "superadmin" },
            { id: "15552222222@c.us", role: "admin" }
          ])
          yield* groups.remove(sessionId, id)
          expect(Option.isNone(yield* groups.find(sessionId, id))).toBe(true)
        }))

      it.effect("contacts: one row per person; a LID seen alone merges into the phone's row once they are linked", () =>
        Effect.gen(function*() {
          const sessionId = yield* newSession
          const contacts = yield* ContactRepo
          yield* contacts.see(sessionId, { phone: null, lid: "200000000000001@lid", name: "Ana" })
          yield* contacts.see(sessionId, { phone: "15553333333@c.us", lid: null, name: null })
          expect((yield* contacts.list(sessionId, Option.none())).total).toBe(2)
          yield* contacts.see(sessionId, { phone: "15553333333@c.us", lid: "200000000000001@lid", name: null })
          const listed = yield* contacts.list(sessionId, Option.none())
          expect(listed.items).toEqual([
            expect.objectContaining({ id: "15553333333@c.us", phone: "15553333333@c.us", lid: "200000000000001@lid", name: "Ana" })
          ])
          // Seen again by its LID only: still that one person.
          yield* contacts.see(sessionId, { phone: null, lid: "200000000000001@lid", name: "Ana B." })
          const again = yield* contacts.list(sessionId, Option.none())
          expect(again.items.map((c) => [c.id, c.name])).toEqual([["15553333333@c.us", "Ana B."]])
        }))

      it.effect("contacts: details and the blocked flag are found by either id, and survive a LID row merging into the phone's", () =>
        Effect.gen(function*() {
          const sessionId = yield* newSession
          const contacts = yield* ContactRepo
          yield* contacts.updateDetails(sessionId, "200000000000002@lid", { pushName: "Bea", about: "hi", isBusiness: true })
          yield* contacts.setBlocked(sessionId, "200000000000002@lid", true)
          expect(yield* contacts.isBlocked(sessionId, "15554444444@c.us")).toBe(false)
          yield* contacts.see(sessionId, { phone: "15554444444@c.us", lid: "200000000000002@lid", name: null })
          const merged = Option.getOrThrow(yield* contacts.find(sessionId, "15554444444@c.us"))
          expect(merged).toMatchObject({ chatId: "15554444444@c.us", lid: "200000000000002@lid", pushName: "Bea", about: "hi", isBusiness: true, blocked: true })
          expect(yield* contacts.isBlocked(sessionId, "200000000000002@lid")).toBe(true)
          expect((yield* contacts.blocklist(sessionId, Option.none())).items.map((c) => c.chatId)).toEqual(["15554444444@c.us"])
          // The network's blocklist is the authority: whoever is not on it is unblocked.
          yield* contacts.syncBlocklist(sessionId, ["15555555555@c.us"])
          expect((yield* contacts.blocklist(sessionId, Option.none())).items.map((c) => c.chatId)).toEqual(["15555555555@c.us"])
          expect(yield* contacts.isBlocked(sessionId, "15554444444@c.us")).toBe(false)
        }))

      it.effect("labels and channels: kept, listed by name, a deleted label leaves its chats", () =>
        Effect.gen(function*() {
          const sessionId = yield* newSession
          const labels = yield* LabelRepo
          yield* labels.upsert(sessionId, { id: "2", name: "VIP", color: 3 })
          yield* labels.upsert(sessionId, { id: "1", name: "Leads", color: 0 })
          yield* labels.setOnChat(sessionId, "15554444444@c.us", "2", true)
          yield* labels.setOnChat(sessionId, "15554444444@c.us", "1", true)
          expect((yield* labels.ofChat(sessionId, "15554444444@c.us")).map((l) => l.name)).toEqual(["Leads", "VIP"])
          yield* labels.remove(sessionId, "2")
          expect((yield* labels.ofChat(sessionId, "15554444444@c.us")).map((l) => l.name)).toEqual(["Leads"])
          expect((yield* labels.list(sessionId, Option.none())).items.map((l) => l.id)).toEqual(["1"])

          const channels = yield* ChannelRepo
          const channel = { id: "120363111@newsletter", name: "News", description: null, inviteCode: "AbCdEf123", subscribers: 3, role: "owner" as const, createdAt: null }
          yield* channels.upsert(sessionId, channel)
          yield* channels.upsert(sessionId, { ...channel, subscribers: 4 })
          expect((yield* channels.list(sessionId, Option.none())).items).toEqual([{ ...channel, subscribers: 4 }])
          yield* channels.remove(sessionId, channel.id)
          expect((yield* channels.list(sessionId, Option.none())).total).toBe(0)
        }))

      it.effect("lists sort text by code point on both backends, whatever Postgres' collation", () =>
        Effect.gen(function*() {
          const sessionId = yield* newSession
          // A natural-language collation (en-US, the test server's) would give a, A, b, B, …, é, _x.
          const names = ["b", "B", "a", "A", "_x", "Z9", "é", "10", "9", "a b", "a-b", "ab"]
          const byCodePoint = [...names].sort()
          const labels = yield* LabelRepo
          yield* Effect.forEach(names, (name, i) => labels.upsert(sessionId, { id: `L${i}`, name, color: i }), { discard: true })
          expect((yield* labels.list(sessionId, Option.none())).items.map((l) => l.name)).toEqual(byCodePoint)
          const groups = yield* GroupRepo
          yield* Effect.forEach(names, (subject, i) => groups.upsert(sessionId, group(`12036301${i}@g.us`, subject, 0)), { discard: true })
          expect((yield* groups.list(sessionId, Option.some({ page: 1, limit: 5 }))).items.map((g) => g.subject))
            .toEqual(byCodePoint.slice(0, 5))
          const contacts = yield* ContactRepo
          const ids = ["1555@c.us", "15551@c.us", "1555-1@c.us", "Abc@lid", "abc@lid"]
          yield* Effect.forEach(ids, (id) => contacts.see(sessionId, { phone: id, lid: null, name: null }), { discard: true })
          expect((yield* contacts.list(sessionId, Option.none())).items.map((c) => c.id)).toEqual([...ids].sort())
        }))

      it.effect("deleting a session deletes what it knew", () =>
        Effect.gen(function*() {
          const sessionId = yield* newSession
          yield* (yield* GroupRepo).upsert(sessionId, group("120363000111@g.us", "g", 2))
          yield* (yield* ContactRepo).see(sessionId, { phone: "15556666666@c.us", lid: null, name: null })
          yield* (yield* LabelRepo).upsert(sessionId, { id: "1", name: "x", color: 1 })
          expect(yield* (yield* SessionRepo).remove(sessionId)).toBe(true)
        }))
    })
  })
}
