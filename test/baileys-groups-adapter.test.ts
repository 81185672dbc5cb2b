/** The Baileys group adapter at the socket boundary: metadata, errors → refusals, operations, the cache, events. */
import { describe, expect, it } from "@effect/vitest"
import { Boom } from "@hapi/boom"
import { Effect, Option } from "effect"
import { fromGroupsUpdate, fromGroupsUpsert, fromParticipantsUpdate, GroupCache, type GroupEventContext } from "../src/runtime/engines/baileys/groupEvents.js"
import { groupErrorOf, groupOf, type GroupSocket, makeGroupOperations } from "../src/runtime/engines/baileys/groups.js"
import {
  ALICE,
  BOB,
  CAROL,
  ALICE_LID,
  BOB_LID,
  CAROL_LID,
  GROUP,
  T,
  stub,
  iqError,
  metadata,
  mapping,
  refusalOf,
  changeOf
} from "./support/baileysSocketStub.js"

describe("groups: metadata → Group", () => {
  it.effect("people get their phone id when WhatsApp or the LID mapping knows it, else the LID; roles, owner, dates", () =>
    Effect.gen(function*() {
      const group = yield* groupOf(metadata({ desc: "What we do", announce: true }), mapping({ [CAROL_LID]: `${CAROL}@s.whatsapp.net` }))
      expect(group).toEqual({
        id: GROUP,
        subject: "Team",
        description: "What we do",
        owner: `${ALICE}@c.us`,
        createdAt: new Date(T * 1000).toISOString(),
        announce: true,
        restrict: false,
        memberAddMode: "admins",
        approval: false,
        participants: [
          { id: `${ALICE}@c.us`, role: "superadmin" },
          { id: `${BOB}@c.us`, role: "member" },
          { id: `${CAROL}@c.us`, role: "admin" }
        ]
      })
      // Baileys' booleans for `<member_add_mode>all_member_add` and `<membership_approval_mode>`
      expect(yield* groupOf({ ...metadata(), memberAddMode: true, joinApprovalMode: true })).toMatchObject({ memberAddMode: "all", approval: true })
      const unknown = yield* groupOf(metadata())
      expect(unknown.participants[2]).toEqual({ id: CAROL_LID, role: "admin" })
      // a phone-addressed group names people by phone JID
      const { creation: _, ...undated } = metadata()
      const pn = yield* groupOf({ ...undated, participants: [{ id: `${BOB}@s.whatsapp.net`, lid: BOB_LID, admin: null }] })
      expect(pn).toMatchObject({ participants: [{ id: `${BOB}@c.us`, role: "member" }], createdAt: null })
    }))
})

describe("groups: WhatsApp's errors → refusals", () => {
  const cases: Array<[string, unknown, "admin" | "member" | "invite", { code: string; refusal: string | undefined; transient: boolean }]> = [
    ["404 item-not-found", iqError(404, "item-not-found"), "member", { code: "GROUP_NOT_FOUND", refusal: "not_found", transient: false }],
    ["403 forbidden on an admin operation", iqError(403, "forbidden"), "admin", { code: "NOT_GROUP_ADMIN", refusal: "forbidden", transient: false }],
    ["401 not-authorized on an admin operation", iqError(401, "not-authorized"), "admin", { code: "NOT_GROUP_ADMIN", refusal: "forbidden", transient: false }],
    ["403 forbidden reading a group", iqError(403, "forbidden"), "member", { code: "NOT_GROUP_MEMBER", refusal: "forbidden", transient: false }],
    ["404 for an invite code", iqError(404, "item-not-found"), "invite", { code: "INVITE_NOT_FOUND", refusal: "not_found", transient: false }],
    ["410 gone (revoked invite)", iqError(410, "gone"), "invite", { code: "INVITE_NOT_FOUND", refusal: "not_found", transient: false }],
    ["406 not-acceptable (invalid invite)", iqError(406, "not-acceptable"), "invite", { code: "INVITE_NOT_FOUND", refusal: "not_found", transient: false }],
    ["403 joining by invite", iqError(403, "forbidden"), "invite", { code: "GROUP_JOIN_FORBIDDEN", refusal: "forbidden", transient: false }],
    ["409 conflict", iqError(409, "conflict"), "admin", { code: "GROUP_CONFLICT", refusal: "conflict", transient: false }],
    ["400 bad-request", iqError(400, "bad-request"), "admin", { code: "INVALID_GROUP_REQUEST", refusal: "invalid", transient: false }],
    ["500 internal-server-error", iqError(500, "internal-server-error"), "admin", { code: "GROUP_X_FAILED_500", refusal: undefined, transient: true }],
    ["a closed connection", new Boom("Connection Closed", { statusCode: 428 }), "admin", { code: "GROUP_X_FAILED_428", refusal: undefined, transient: true }],
    ["a timeout", new Boom("Timed Out", { statusCode: 408 }), "member", { code: "GROUP_X_FAILED_408", refusal: undefined, transient: true }]
  ]
  for (const [what, error, needs, expected] of cases) {
    it(what, () => expect(refusalOf(groupErrorOf("GROUP_X", needs)(error))).toEqual(expected))
  }
})

describe("groups: operations over the socket", () => {
  const setup = (methods: Partial<GroupSocket>) => {
    const learnt: Array<unknown> = []
    const cache = new GroupCache((pairs) => void learnt.push(...pairs))
    return { cache, learnt, groups: makeGroupOperations(stub<GroupSocket>(methods), cache, mapping({})) }
  }

  it.effect("create sends wire JIDs, answers the Group and caches the metadata (members' ids learnt)", () =>
    Effect.gen(function*() {
      const calls: Array<unknown> = []
      const { cache, groups, learnt } = setup({ groupCreate: async (subject, participants) => (calls.push([subject, participants]), metadata()) })
      const group = yield* groups.create("Team", [`${BOB}@c.us`, CAROL_LID])
      expect(calls).toEqual([["Team", [`${BOB}@s.whatsapp.net`, CAROL_LID]]])
      expect(group.id).toBe(GROUP)
      expect(yield* Effect.promise(() => cache.lookup(GROUP))).toMatchObject({ subject: "Team" })
      expect(learnt).toEqual([
        { lid: ALICE_LID, pn: `${ALICE}@s.whatsapp.net` },
        { lid: BOB_LID, pn: `${BOB}@s.whatsapp.net` }
      ])
      // each pair is told once, however often the group is read
      cache.put(metadata())
      expect(learnt).toHaveLength(2)
    }))

  it.effect("updateParticipants: a status per person named as asked, even when WhatsApp answers with the LID; the cached copy is dropped", () =>
    Effect.gen(function*() {
      const { cache, groups } = setup({
        groupParticipantsUpdate: async (_jid, participants, action) => {
          expect([participants, action]).toEqual([[`${BOB}@s.whatsapp.net`, `${CAROL}@s.whatsapp.net`, "15559999999@s.whatsapp.net"], "add"])
          return [
            { status: "200", jid: BOB_LID, content: { tag: "participant", attrs: { jid: BOB_LID, phone_number: `${BOB}@s.whatsapp.net` } } },
            { status: "409", jid: `${CAROL}@s.whatsapp.net`, content: { tag: "participant", attrs: {} } },
            { status: "403", jid: "15559999999@s.whatsapp.net", content: { tag: "participant", attrs: {} } }
          ]
        }
      })
      cache.put(metadata())
      const results = yield* groups.updateParticipants(GROUP, [`${BOB}@c.us`, `${CAROL}@c.us`, "15559999999@c.us"], "add")
      expect(results).toEqual([
        { id: `${BOB}@c.us`, status: 200, ok: true },
        { id: `${CAROL}@c.us`, status: 409, ok: false },
        { id: "15559999999@c.us", status: 403, ok: false }
      ])
      expect(cache.get(GROUP)).toBeUndefined()
    }))

  it.effect("a refused change keeps its refusal, and still drops the cached copy", () =>
    Effect.gen(function*() {
      const { cache, groups } = setup({ groupUpdateSubject: () => Promise.reject(iqError(401, "not-authorized")) })
      cache.put(metadata())
      const error = yield* Effect.flip(groups.setSubject(GROUP, "New"))
      expect(refusalOf(error)).toEqual({ code: "NOT_GROUP_ADMIN", refusal: "forbidden", transient: false })
      expect(cache.get(GROUP)).toBeUndefined()
    }))

  it.effect("description \"\" deletes it; list, invite codes and join map to API ids", () =>
    Effect.gen(function*() {
      const descriptions: Array<string | undefined> = []
      const { groups } = setup({
        groupUpdateDescription: async (_jid, description) => void descriptions.push(description),
        groupFetchAllParticipating: async () => ({ [GROUP]: metadata() }),
        groupInviteCode: async () => "AbCdEfGhIjKlMnOpQrStUv",
        groupRevokeInvite: async () => undefined,
        groupAcceptInvite: async (code) => (code === "AbCdEfGhIjKlMnOpQrStUv" ? GROUP : undefined)
      })
      yield* groups.setDescription(GROUP, "")
      yield* groups.setDescription(GROUP, "About")
      expect(descriptions).toEqual([undefined, "About"])
      expect((yield* groups.list).map((g) => g.id)).toEqual([GROUP])
      expect(yield* groups.inviteCode(GROUP)).toBe("AbCdEfGhIjKlMnOpQrStUv")
      // an empty answer is a failure, not an empty code
      expect((yield* Effect.flip(groups.revokeInvite(GROUP))).code).toBe("GROUP_REVOKE_INVITE_FAILED")
      expect(yield* groups.join("AbCdEfGhIjKlMnOpQrStUv")).toBe(GROUP)
    }))
})

describe("groups: the cache Baileys' sends read", () => {
  it.effect("fetches a group once, then answers from memory; a failed fetch is left to Baileys", () =>
    Effect.gen(function*() {
      const cache = new GroupCache()
      expect(yield* Effect.promise(() => cache.lookup(GROUP))).toBeUndefined() // no socket yet
      let fetches = 0
      cache.attach(async (jid) => {
        fetches++
        if (jid !== GROUP) throw iqError(404, "item-not-found")
        return metadata()
      })
      yield* Effect.promise(() => cache.lookup(GROUP))
      yield* Effect.promise(() => cache.lookup(GROUP))
      expect(fetches).toBe(1)
      expect(yield* Effect.promise(() => cache.lookup("120363999@g.us"))).toBeUndefined()
    }))

  it("participant events keep the members current for the next send", () => {
    const cache = new GroupCache()
    cache.put(metadata())
    const event = (action: "add" | "remove" | "promote", id: string) =>
      cache.applyParticipants({ id: GROUP, author: ALICE_LID, action, participants: [{ id, admin: null }] })
    event("add", "444444444444444@lid")
    event("remove", BOB_LID)
    event("promote", "444444444444444@lid")
    expect(cache.get(GROUP)?.participants.map((p) => [p.id, p.admin])).toEqual([
      [ALICE_LID, "superadmin"],
      [CAROL_LID, "admin"],
      ["444444444444444@lid", "admin"]
    ])
    expect(cache.get(GROUP)?.size).toBe(3)
  })
})

describe("groups: Baileys' events → GroupChanged", () => {
  const context = (overrides: Partial<GroupEventContext> = {}): GroupEventContext => ({
    cache: new GroupCache(),
    me: () => ({ id: `${ALICE}:3@s.whatsapp.net`, lid: "111111111111111:3@lid" }),
    phoneOfLid: mapping({}),
    ...overrides
  })

  it.effect("groups.upsert (a <create> notification): joined, with the group", () =>
    Effect.gen(function*() {
      const events = yield* fromGroupsUpsert([{ ...metadata(), author: BOB_LID, authorPn: `${BOB}@s.whatsapp.net` }], context())
      expect(changeOf(events[0])).toMatchObject({ kind: "join", groupId: GROUP, by: `${BOB}@c.us`, group: { subject: "Team" } })
    }))

  it.effect("groups.update from a notification reports the fields it carries (a deleted description is null)", () =>
    Effect.gen(function*() {
      const ctx = context()
      ctx.cache.put(metadata({ desc: "old" }))
      // rc14: `desc: undefined` when the description was deleted; the author's phone from the cached members
      const events = yield* fromGroupsUpdate([{ id: GROUP, subject: "Renamed", author: BOB_LID }, { id: GROUP, desc: undefined, author: BOB_LID } as never], ctx)
      expect(events.map(changeOf)).toMatchObject([
        { kind: "update", groupId: GROUP, update: { subject: "Renamed" }, by: `${BOB}@c.us`, group: { subject: "Renamed" } },
        { kind: "update", update: { description: null } }
      ])
      const settings = yield* fromGroupsUpdate([{ id: GROUP, announce: true, restrict: false, author: "999@lid" }], ctx)
      expect(changeOf(settings[0])).toMatchObject({ update: { announce: true, restrict: false }, by: "999@lid" })
      const joining = yield* fromGroupsUpdate([{ id: GROUP, memberAddMode: true, author: BOB_LID }, { id: GROUP, joinApprovalMode: false, author: BOB_LID }], ctx)
      expect(joining.map((event) => changeOf(event).update)).toEqual([{ memberAddMode: "all" }, { approval: false }])
    }))

  it.effect("groups.update with whole metadata (a re-fetch) reports only what differs from the cached copy", () =>
    Effect.gen(function*() {
      const ctx = context()
      // not cached: nothing to compare with, kept silently
      expect(yield* fromGroupsUpdate([metadata()], ctx)).toEqual([])
      expect(yield* fromGroupsUpdate([metadata()], ctx)).toEqual([])
      const events = yield* fromGroupsUpdate([{ ...metadata({ desc: "new", announce: true }) }], ctx)
      expect(changeOf(events[0]).update).toEqual({ description: "new", announce: true })
      const rules = yield* fromGroupsUpdate([{ ...metadata({ desc: "new", announce: true }), memberAddMode: true }], ctx)
      expect(changeOf(rules[0]).update).toEqual({ memberAddMode: "all" })
    }))

  it.effect("group-participants.update: people in phone form, the actor from the cached members (rc14 drops authorPn)", () =>
    Effect.gen(function*() {
      const ctx = context()
      ctx.cache.put(metadata())
      const events = yield* fromParticipantsUpdate({
        id: GROUP,
        author: BOB_LID,
        action: "promote",
        participants: [{ id: CAROL_LID, phoneNumber: `${CAROL}@s.whatsapp.net`, admin: null }]
      }, ctx)
      expect(changeOf(events[0])).toMatchObject({ kind: "participants", action: "promote", participants: [`${CAROL}@c.us`], by: `${BOB}@c.us` })
      expect(ctx.cache.get(GROUP)?.participants.find((p) => p.id === CAROL_LID)?.admin).toBe("admin")
      expect(yield* fromParticipantsUpdate({ id: GROUP, author: BOB_LID, action: "modify", participants: [] }, ctx)).toEqual([])
    }))

  it.effect("the account added: joined, with the group read once; added with others: their participants event too", () =>
    Effect.gen(function*() {
      const fetched: Array<string> = []
      const ctx = context({ fetch: (jid) => Effect.sync(() => (fetched.push(jid), Option.some(metadata()))) })
      const events = yield* fromParticipantsUpdate({
        id: GROUP,
        author: BOB_LID,
        authorPn: `${BOB}@s.whatsapp.net`,
        action: "add",
        participants: [{ id: ALICE_LID, phoneNumber: `${ALICE}@s.whatsapp.net` }, { id: "444444444444444@lid" }]
      }, ctx)
      expect(events.map(changeOf)).toMatchObject([
        { kind: "participants", action: "add", participants: ["444444444444444@lid"] },
        { kind: "join", groupId: GROUP, by: `${BOB}@c.us`, group: { subject: "Team" } }
      ])
      expect(fetched).toEqual([GROUP])
    }))

  it.effect("the account removed (or leaving): left, and the group forgotten", () =>
    Effect.gen(function*() {
      const ctx = context()
      ctx.cache.put(metadata())
      const events = yield* fromParticipantsUpdate({ id: GROUP, author: BOB_LID, action: "remove", participants: [{ id: ALICE_LID }] }, ctx)
      expect(events.map(changeOf)).toEqual([{ kind: "leave", groupId: GROUP, by: `${BOB}@c.us` }])
      expect(ctx.cache.get(GROUP)).toBeUndefined()
    }))
})
