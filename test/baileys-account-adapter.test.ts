/**
 * The Baileys account adapters at the socket boundary, for what the loopback peer cannot carry
 * or cannot make happen: the push name setting (an app-state patch, which needs the phone's
 * app-state keys), pictures hidden by privacy (401), hidden about texts, `blocklist.set`
 * (rc14 never emits it), blocking a LID the mapping store cannot name, and group pictures'
 * notifications (not a person's change).
 */
import { describe, expect, it } from "@effect/vitest"
import { Boom } from "@hapi/boom"
import { Effect } from "effect"
import { fromBlocklist, fromContactUpdates, makeAccountContactOperations, PushNames, type AccountContactSocket } from "../src/runtime/engines/baileys/accountContacts.js"
import { joinRequestOf } from "../src/runtime/engines/baileys/groupAdmin.js"
import { makeProfileOperations, type ProfileSocket } from "../src/runtime/engines/baileys/profile.js"
import { ALICE, BOB, BOB_LID, CAROL_LID, GROUP, iqError, mapping, refusalOf, stub, T } from "./support/baileysSocketStub.js"

const me = { id: `${ALICE}:3@s.whatsapp.net`, lid: "111111111111111:3@lid", name: "Alice" }

describe("profile at the socket boundary", () => {
  it.effect("the name is set with Baileys' push name setting; an empty one is refused before WhatsApp is asked", () =>
    Effect.gen(function*() {
      const names: Array<string> = []
      const profile = makeProfileOperations(stub<ProfileSocket>({ updateProfileName: async (name) => void names.push(name) }), () => me)
      yield* profile.setName("Alice B.")
      expect(names).toEqual(["Alice B."])
      expect(refusalOf(yield* Effect.flip(profile.setName("  ")))).toEqual({ code: "PROFILE_NAME_INVALID", refusal: "invalid", transient: false })
      expect(names).toEqual(["Alice B."])
    }))

  it.effect("a hidden picture (401) and a hidden about ('') read as none; other failures are errors", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const profile = makeProfileOperations(stub<ProfileSocket>({
        fetchStatus: async (jid) => (asked.push(jid), [{ id: jid, status: { status: "", setAt: new Date(0) } }]),
        profilePictureUrl: async () => { throw iqError(401, "not-authorized") }
      }), () => me)
      expect(yield* profile.get).toEqual({ name: "Alice", about: null, pictureUrl: null })
      expect(asked).toEqual([me.id])

      const broken = makeProfileOperations(stub<ProfileSocket>({
        fetchStatus: async () => [],
        profilePictureUrl: async () => { throw iqError(500, "internal-server-error") }
      }), () => me)
      // WhatsApp's own trouble is worth retrying
      expect(refusalOf(yield* Effect.flip(broken.get))).toEqual({ code: "PROFILE_FAILED_500", refusal: undefined, transient: true })
    }))

  it.effect("before login there is no own JID to ask about", () =>
    Effect.gen(function*() {
      const profile = makeProfileOperations(stub<ProfileSocket>({}), () => undefined)
      expect(refusalOf(yield* Effect.flip(profile.setPicture(null)))).toEqual({ code: "NOT_LOGGED_IN", refusal: undefined, transient: true })
    }))
})

describe("contacts at the socket boundary", () => {
  const context = { phoneOfLid: mapping({ [BOB_LID]: `${BOB}@s.whatsapp.net` }), pushNames: new PushNames(), dispatcher: undefined }

  it.effect("blocking a LID the mapping store cannot name is not found (Baileys throws a 400 before asking)", () =>
    Effect.gen(function*() {
      const contacts = makeAccountContactOperations(stub<AccountContactSocket>({
        updateBlockStatus: async (jid) => { throw new Boom(`Unable to resolve PN JID for LID: ${jid}`, { statusCode: 400 }) }
      }), context)
      expect(refusalOf(yield* Effect.flip(contacts.setBlocked(CAROL_LID, true)))).toEqual({ code: "CONTACT_NOT_FOUND", refusal: "not_found", transient: false })
      expect(refusalOf(yield* Effect.flip(contacts.setBlocked(GROUP, true)))).toEqual({ code: "NOT_A_PERSON", refusal: "invalid", transient: false })
    }))

  it.effect("the blocklist as WhatsApp gives it (LIDs, phone JIDs) in API ids, phones where known", () =>
    Effect.gen(function*() {
      const contacts = makeAccountContactOperations(stub<AccountContactSocket>({
        fetchBlocklist: async () => [BOB_LID, CAROL_LID, "15551230009@s.whatsapp.net"]
      }), context)
      expect(yield* contacts.blocklist).toEqual([`${BOB}@c.us`, CAROL_LID, "15551230009@c.us"])
    }))

  it.effect("blocklist.set (the whole list, blocked) and blocklist.update (added / removed)", () =>
    Effect.gen(function*() {
      const [set] = yield* fromBlocklist({ blocklist: [BOB_LID, CAROL_LID] }, context.phoneOfLid)
      expect(set).toMatchObject({ _tag: "ContactsChanged", changes: [{ chatId: `${BOB}@c.us`, blocked: true }, { chatId: CAROL_LID, blocked: true }] })
      const [removed] = yield* fromBlocklist({ blocklist: [BOB_LID], type: "remove" }, context.phoneOfLid)
      expect(removed).toMatchObject({ changes: [{ chatId: `${BOB}@c.us`, blocked: false }] })
    }))

  it.effect("contacts.update: a group's picture is not a person's; a push name is news once", () =>
    Effect.gen(function*() {
      const pushNames = new PushNames()
      expect(yield* fromContactUpdates([{ id: GROUP, imgUrl: "changed" }], context.phoneOfLid, pushNames)).toEqual([])
      const [named] = yield* fromContactUpdates([{ id: BOB_LID, notify: "Bobby" }], context.phoneOfLid, pushNames)
      expect(named).toMatchObject({ changes: [{ chatId: `${BOB}@c.us`, pushName: "Bobby" }] })
      expect(yield* fromContactUpdates([{ id: BOB_LID, notify: "Bobby" }], context.phoneOfLid, pushNames)).toEqual([])
    }))
})

describe("join requests at the socket boundary", () => {
  it.effect("a request without the phone number is named by the mapping store, else by LID", () =>
    Effect.gen(function*() {
      const phoneOfLid = mapping({ [BOB_LID]: `${BOB}@s.whatsapp.net` })
      expect(yield* joinRequestOf({ jid: BOB_LID, request_method: "linked_group_join", request_time: `${T}` }, phoneOfLid))
        .toEqual({ id: `${BOB}@c.us`, requestedAt: new Date(T * 1000).toISOString(), method: "linked_group_join" })
      expect(yield* joinRequestOf({ jid: CAROL_LID }, phoneOfLid)).toEqual({ id: CAROL_LID, requestedAt: null, method: null })
    }))
})
