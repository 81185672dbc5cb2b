import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { isIgnoredJid, type PhoneOfLid, senderIdsOf, toApiId, toWireJid } from "../src/runtime/engines/baileys/jids.js"

describe("Baileys jids: wire → API", () => {
  it("maps phone JIDs to c.us, dropping device and agent parts", () => {
    expect(toApiId("15551234567@s.whatsapp.net")).toBe("15551234567@c.us")
    expect(toApiId("15551234567:12@s.whatsapp.net")).toBe("15551234567@c.us")
    expect(toApiId("15551234567_1:3@s.whatsapp.net")).toBe("15551234567@c.us")
    expect(toApiId("15551234567@c.us")).toBe("15551234567@c.us")
    expect(toApiId("15551234567:2@hosted")).toBe("15551234567@c.us")
  })

  it("keeps LIDs as LIDs, without the device", () => {
    expect(toApiId("123456789012345@lid")).toBe("123456789012345@lid")
    expect(toApiId("123456789012345:7@lid")).toBe("123456789012345@lid")
    expect(toApiId("123456789012345:99@hosted.lid")).toBe("123456789012345@lid")
  })

  it("passes groups and channels through", () => {
    expect(toApiId("120363012345678901@g.us")).toBe("120363012345678901@g.us")
    expect(toApiId("120363098765432109@newsletter")).toBe("120363098765432109@newsletter")
  })

  it("has no API form for broadcasts, calls and junk", () => {
    expect(toApiId("status@broadcast")).toBeNull()
    expect(toApiId("1234@broadcast")).toBeNull()
    expect(toApiId("1234@call")).toBeNull()
    expect(toApiId("no-at-sign")).toBeNull()
    expect(toApiId("@s.whatsapp.net")).toBeNull()
    expect(toApiId(undefined)).toBeNull()
  })

  it("ignores broadcast lists but reads the status broadcast (status updates are stored)", () => {
    expect(isIgnoredJid("status@broadcast")).toBe(false)
    expect(isIgnoredJid("1234567890@broadcast")).toBe(true)
    expect(isIgnoredJid("15551234567@s.whatsapp.net")).toBe(false)
    expect(isIgnoredJid("120363012345678901@g.us")).toBe(false)
  })
})

describe("Baileys jids: API → wire", () => {
  it("maps c.us to s.whatsapp.net (stripping any device part)", () => {
    expect(toWireJid("15551234567@c.us")).toBe("15551234567@s.whatsapp.net")
    expect(toWireJid("15551234567:3@c.us")).toBe("15551234567@s.whatsapp.net")
  })

  it("passes LIDs, groups and channels through", () => {
    expect(toWireJid("123456789012345@lid")).toBe("123456789012345@lid")
    expect(toWireJid("120363012345678901@g.us")).toBe("120363012345678901@g.us")
    expect(toWireJid("120363098765432109@newsletter")).toBe("120363098765432109@newsletter")
  })

  it("round-trips every API form", () => {
    for (const id of ["15551234567@c.us", "123456789012345@lid", "120363012345678901@g.us", "120363098765432109@newsletter"]) {
      expect(toApiId(toWireJid(id))).toBe(id)
    }
  })
})

describe("Baileys jids: who wrote an incoming message", () => {
  const phoneOf = (known: Record<string, string>): PhoneOfLid => (lid) => Effect.succeed(Option.fromNullable(known[lid]))

  it.effect("a 1:1 message from a phone JID", () =>
    Effect.gen(function*() {
      const ids = yield* senderIdsOf({ remoteJid: "15551234567@s.whatsapp.net" })
      expect(ids).toEqual({ chatId: "15551234567@c.us", from: "15551234567@c.us", fromPhone: "15551234567@c.us", fromLid: null })
    }))

  it.effect("a 1:1 message from a phone JID that also names its LID", () =>
    Effect.gen(function*() {
      const ids = yield* senderIdsOf({ remoteJid: "15551234567@s.whatsapp.net", remoteJidAlt: "99887766554433@lid" })
      expect(ids).toEqual({ chatId: "15551234567@c.us", from: "15551234567@c.us", fromPhone: "15551234567@c.us", fromLid: "99887766554433@lid" })
    }))

  it.effect("a LID sender with the phone in remoteJidAlt: the phone is the chat, both are reported", () =>
    Effect.gen(function*() {
      const ids = yield* senderIdsOf({ remoteJid: "99887766554433@lid", remoteJidAlt: "15551234567@s.whatsapp.net" })
      expect(ids).toEqual({ chatId: "15551234567@c.us", from: "15551234567@c.us", fromPhone: "15551234567@c.us", fromLid: "99887766554433@lid" })
    }))

  it.effect("a LID sender with the phone in senderPn (older Baileys)", () =>
    Effect.gen(function*() {
      const ids = yield* senderIdsOf({ remoteJid: "99887766554433@lid", senderPn: "15551234567@s.whatsapp.net" })
      expect(ids?.chatId).toBe("15551234567@c.us")
      expect(ids?.fromLid).toBe("99887766554433@lid")
    }))

  it.effect("a LID sender resolved through the LID mapping store", () =>
    Effect.gen(function*() {
      const ids = yield* senderIdsOf(
        { remoteJid: "99887766554433:2@lid" },
        phoneOf({ "99887766554433:2@lid": "15551234567:2@s.whatsapp.net" })
      )
      expect(ids).toEqual({ chatId: "15551234567@c.us", from: "15551234567@c.us", fromPhone: "15551234567@c.us", fromLid: "99887766554433@lid" })
    }))

  it.effect("a LID sender nobody can resolve: the LID is the chat", () =>
    Effect.gen(function*() {
      const ids = yield* senderIdsOf({ remoteJid: "99887766554433@lid" }, phoneOf({}))
      expect(ids).toEqual({ chatId: "99887766554433@lid", from: "99887766554433@lid", fromPhone: null, fromLid: "99887766554433@lid" })
    }))

  it.effect("in a group, the chat is the group and the author comes from participant / participantAlt", () =>
    Effect.gen(function*() {
      const ids = yield* senderIdsOf({
        remoteJid: "120363012345678901@g.us",
        participant: "99887766554433:5@lid",
        participantAlt: "15551234567@s.whatsapp.net"
      })
      expect(ids).toEqual({ chatId: "120363012345678901@g.us", from: "15551234567@c.us", fromPhone: "15551234567@c.us", fromLid: "99887766554433@lid" })
    }))

  it.effect("a status update is the status broadcast's, written by its participant", () =>
    Effect.gen(function*() {
      expect(yield* senderIdsOf({ remoteJid: "status@broadcast", participant: "15551234567@s.whatsapp.net" }))
        .toEqual({ chatId: "status@broadcast", from: "15551234567@c.us", fromPhone: "15551234567@c.us", fromLid: null })
      expect(yield* senderIdsOf({ remoteJid: "status@broadcast" })).toBeNull()
    }))
})
