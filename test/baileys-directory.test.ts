/** The Baileys channel, label and contact adapters at the socket boundary (the peer has no w:mex or app-state). */
import { describe, expect, it } from "@effect/vitest"
import { Boom } from "@hapi/boom"
import { type BinaryNode, proto, type USyncQuery } from "@whiskeysockets/baileys"
import { Effect } from "effect"
import { channelMessagesOf, channelOf, type ChannelSocket, makeChannelOperations } from "../src/runtime/engines/baileys/channels.js"
import { type ContactSocket, contactSeenOf, fromContacts, fromLidPairs, makeContactOperations } from "../src/runtime/engines/baileys/contacts.js"
import { toWireJid } from "../src/runtime/engines/baileys/jids.js"
import { fromLabelAssociation, fromLabelEdit, type LabelCreds, LabelRegistry, type LabelSocket, makeLabelOperations } from "../src/runtime/engines/baileys/labels.js"
import {
  ALICE,
  BOB,
  CAROL,
  BOB_LID,
  CAROL_LID,
  GROUP,
  T,
  stub,
  mapping,
  refusalOf
} from "./support/baileysSocketStub.js"

describe("channels: newsletters at the socket boundary", () => {
  const CHANNEL = "120363111111111111@newsletter"
  /** `newsletterCreate` in rc14 flattens the GraphQL answer (parseNewsletterCreateResponse). */
  const created = {
    id: CHANNEL,
    owner: undefined,
    name: "News",
    creation_time: T,
    description: "Daily",
    invite: "0029VaAbCdEfGhIjKlMnOp",
    subscribers: 0,
    verification: "UNVERIFIED",
    picture: { id: undefined, directPath: undefined },
    mute_state: "OFF"
  }
  /** `newsletterMetadata` returns the raw `xwa2_newsletter` object. */
  const raw = (role: string) => ({
    id: CHANNEL,
    state: { type: "ACTIVE" },
    thread_metadata: {
      creation_time: `${T}`,
      description: { id: "1", text: "Daily", update_time: `${T}` },
      handle: null,
      invite: "0029VaAbCdEfGhIjKlMnOp",
      name: { id: "2", text: "News", update_time: `${T}` },
      picture: null,
      preview: null,
      subscribers_count: "42",
      verification: "UNVERIFIED"
    },
    viewer_metadata: { mute: "OFF", role }
  })
  const graphQlError = (code: number) => new Boom(`GraphQL server error: not found`, { statusCode: code, data: { message: "not found" } })
  const plaintext = (message: proto.IMessage) => proto.Message.encode(proto.Message.fromObject(message)).finish()
  /** The `<iq>` answer of `newsletterFetchMessages`. */
  const updates: BinaryNode = {
    tag: "iq",
    attrs: { type: "result" },
    content: [{
      tag: "message_updates",
      attrs: {},
      content: [{
        tag: "messages",
        attrs: { jid: CHANNEL },
        content: [
          { tag: "message", attrs: { server_id: "101", id: "A1", t: `${T}`, type: "text" }, content: [{ tag: "plaintext", attrs: {}, content: plaintext({ conversation: "first" }) }] },
          {
            tag: "message",
            attrs: { server_id: "102", id: "A2", t: `${T + 60}`, type: "media" },
            content: [{ tag: "plaintext", attrs: {}, content: plaintext({ imageMessage: { mimetype: "image/jpeg", caption: "a photo" } }) }]
          },
          { tag: "message", attrs: { server_id: "103", id: "A3", t: `${T + 120}`, type: "poll" }, content: [] }
        ]
      }]
    }]
  }

  it("both answer shapes map to the API's Channel", () => {
    expect(channelOf(created, "owner")).toEqual({
      id: CHANNEL,
      name: "News",
      description: "Daily",
      inviteCode: "0029VaAbCdEfGhIjKlMnOp",
      subscribers: 0,
      role: "owner",
      createdAt: new Date(T * 1000).toISOString()
    })
    expect(channelOf(raw("SUBSCRIBER"), "guest")).toMatchObject({ name: "News", subscribers: 42, role: "subscriber", description: "Daily" })
    expect(channelOf(null, "guest")).toBeNull()
  })

  it("messages: newest first, text and captions read from the plaintext", () => {
    expect(channelMessagesOf(CHANNEL, updates)).toEqual([
      { id: "103", channelId: CHANNEL, type: "poll", text: null, timestamp: new Date((T + 120) * 1000).toISOString() },
      { id: "102", channelId: CHANNEL, type: "image", text: "a photo", timestamp: new Date((T + 60) * 1000).toISOString() },
      { id: "101", channelId: CHANNEL, type: "text", text: "first", timestamp: new Date(T * 1000).toISOString() }
    ])
  })

  it.effect("operations: create, get (null → CHANNEL_NOT_FOUND), subscribe by invite, unsubscribe, delete, messages", () =>
    Effect.gen(function*() {
      const calls: Array<unknown> = []
      const channels = makeChannelOperations(stub<ChannelSocket>({
        // rc14's declared types do not match what it returns: the stub returns what it really does
        newsletterCreate: async (name, description) => (calls.push(["create", name, description]), created as never),
        newsletterMetadata: async (type, key) => {
          calls.push(["metadata", type, key])
          return key === CHANNEL || key === "0029VaAbCdEfGhIjKlMnOp" ? (raw("GUEST") as never) : null
        },
        newsletterFollow: async (jid) => calls.push(["follow", jid]),
        newsletterUnfollow: async (jid) => calls.push(["unfollow", jid]),
        newsletterDelete: async (jid) => void calls.push(["delete", jid]),
        newsletterFetchMessages: async (jid, count) => (calls.push(["messages", jid, count]), updates)
      }))
      expect(yield* channels.create("News", null)).toMatchObject({ id: CHANNEL, role: "owner" })
      expect(yield* channels.get(CHANNEL)).toMatchObject({ id: CHANNEL, role: "guest" })
      expect(refusalOf(yield* Effect.flip(channels.get("120363999@newsletter")))).toEqual({ code: "CHANNEL_NOT_FOUND", refusal: "not_found", transient: false })
      expect(yield* channels.subscribe({ inviteCode: "0029VaAbCdEfGhIjKlMnOp" })).toMatchObject({ id: CHANNEL, role: "subscriber" })
      expect(refusalOf(yield* Effect.flip(channels.subscribe({ inviteCode: "NoSuchInvite" })))).toMatchObject({ code: "INVITE_NOT_FOUND" })
      yield* channels.unsubscribe(CHANNEL)
      yield* channels.delete(CHANNEL)
      expect((yield* channels.messages(CHANNEL, 3)).map((m) => m.id)).toEqual(["103", "102", "101"])
      expect(calls).toEqual([
        ["create", "News", undefined],
        ["metadata", "jid", CHANNEL],
        ["metadata", "jid", "120363999@newsletter"],
        ["metadata", "invite", "0029VaAbCdEfGhIjKlMnOp"],
        ["follow", CHANNEL],
        ["metadata", "invite", "NoSuchInvite"],
        ["unfollow", CHANNEL],
        ["delete", CHANNEL],
        ["messages", CHANNEL, 3]
      ])
    }))

  it.effect("GraphQL refusals: 404 not found, 403 not an admin; anything else is an engine failure", () =>
    Effect.gen(function*() {
      const failing = (error: unknown) => makeChannelOperations(stub<ChannelSocket>({ newsletterDelete: () => Promise.reject(error) }))
      expect(refusalOf(yield* Effect.flip(failing(graphQlError(404)).delete(CHANNEL)))).toEqual({ code: "CHANNEL_NOT_FOUND", refusal: "not_found", transient: false })
      expect(refusalOf(yield* Effect.flip(failing(graphQlError(403)).delete(CHANNEL)))).toEqual({ code: "NOT_CHANNEL_ADMIN", refusal: "forbidden", transient: false })
      const odd = new Boom("Failed to newsletter delete v2, unexpected response structure.", { statusCode: 400 })
      expect(refusalOf(yield* Effect.flip(failing(odd).delete(CHANNEL)))).toEqual({ code: "CHANNEL_DELETE_FAILED_400", refusal: undefined, transient: false })
    }))

  it("a send to a channel keeps its @newsletter JID (Baileys sends it as plaintext)", () => {
    expect(toWireJid(CHANNEL)).toBe(CHANNEL)
  })
})

describe("labels: WhatsApp Business at the socket boundary", () => {
  const setup = (creds: LabelCreds, methods: Partial<LabelSocket> = {}) => {
    const added: Array<unknown> = []
    const registry = new LabelRegistry()
    const socket = stub<LabelSocket>({
      addLabel: async (jid, label) => void added.push([jid, label]),
      addChatLabel: async (jid, labelId) => void added.push(["chat+", jid, labelId]),
      removeChatLabel: async (jid, labelId) => void added.push(["chat-", jid, labelId]),
      ...methods
    })
    return { added, registry, labels: makeLabelOperations(socket, () => creds, registry) }
  }
  const business: LabelCreds = { platform: "smba", me: { id: `${ALICE}:3@s.whatsapp.net` } }

  it.effect("a business account: labels numbered after those known, chats labelled by wire JID", () =>
    Effect.gen(function*() {
      const { added, labels, registry } = setup(business)
      expect(yield* labels.create("VIP", 3)).toEqual({ id: "1", name: "VIP", color: 3 })
      // two at once take two numbers
      const both = yield* Effect.all([labels.create("A", 0), labels.create("B", 0)], { concurrency: 2 })
      expect(both.map((l) => l.id)).toEqual(["2", "3"])
      fromLabelEdit({ id: "7", name: "Paid", color: 4, deleted: false }, registry)
      expect(yield* labels.create("Late", null)).toEqual({ id: "8", name: "Late", color: 4 })
      yield* labels.addToChat(`${BOB}@c.us`, "8")
      yield* labels.removeFromChat(GROUP, "8")
      expect(added).toEqual([
        ["", { id: "1", name: "VIP", color: 3, deleted: false }],
        ["", { id: "2", name: "A", color: 0, deleted: false }],
        ["", { id: "3", name: "B", color: 0, deleted: false }],
        ["", { id: "8", name: "Late", color: 4, deleted: false }],
        ["chat+", `${BOB}@s.whatsapp.net`, "8"],
        ["chat-", GROUP, "8"]
      ])
    }))

  it.effect("a consumer account is refused with NOT_A_BUSINESS_ACCOUNT (409)", () =>
    Effect.gen(function*() {
      const { added, labels } = setup({ ...business, platform: "android" })
      expect(refusalOf(yield* Effect.flip(labels.create("VIP", 1)))).toEqual({ code: "NOT_A_BUSINESS_ACCOUNT", refusal: "conflict", transient: false })
      expect(refusalOf(yield* Effect.flip(labels.addToChat(`${BOB}@c.us`, "1")))).toMatchObject({ code: "NOT_A_BUSINESS_ACCOUNT" })
      expect(added).toEqual([])
    }))

  it.effect("an unknown platform asks for the business profile, once", () =>
    Effect.gen(function*() {
      let asked = 0
      const consumer = setup({ me: business.me! }, { getBusinessProfile: async () => void asked++ })
      expect((yield* Effect.flip(consumer.labels.create("VIP", 1))).code).toBe("NOT_A_BUSINESS_ACCOUNT")
      expect((yield* Effect.flip(consumer.labels.create("VIP", 1))).code).toBe("NOT_A_BUSINESS_ACCOUNT")
      expect(asked).toBe(1)
      const shop = setup({ ...business, platform: "web" }, {
        getBusinessProfile: async (jid) => ({ wid: jid, description: "A shop", website: [], business_hours: {} }) as never
      })
      expect(yield* shop.labels.create("VIP", 1)).toMatchObject({ id: "1" })
    }))

  it.effect("without the phone's app-state keys: APP_STATE_NOT_READY (409), worth retrying", () =>
    Effect.gen(function*() {
      const { labels, registry } = setup(business, { addLabel: () => Promise.reject(new Boom("App state key not present!", { statusCode: 400 })) })
      expect(refusalOf(yield* Effect.flip(labels.create("VIP", 1)))).toEqual({ code: "APP_STATE_NOT_READY", refusal: "conflict", transient: true })
      // the number it had taken is free again
      expect(registry.nextId()).toBe("1")
    }))

  it.effect("labels.edit → LabelChanged label (deleted flag); labels.association on chats → association", () =>
    Effect.gen(function*() {
      const registry = new LabelRegistry()
      expect(fromLabelEdit({ id: "3", name: "Old", color: 5, deleted: true }, registry)).toEqual([
        expect.objectContaining({ _tag: "LabelChanged", change: { kind: "label", label: { id: "3", name: "Old", color: 5 }, deleted: true } })
      ])
      const chat = (chatId: string, type: "add" | "remove") =>
        fromLabelAssociation({ type, association: { type: "label_jid", chatId, labelId: "3" } } as never, mapping({ [BOB_LID]: `${BOB}@s.whatsapp.net` }))
      expect((yield* chat(BOB_LID, "add"))[0]).toMatchObject({ change: { kind: "association", chatId: `${BOB}@c.us`, labelId: "3", added: true } })
      expect((yield* chat(GROUP, "remove"))[0]).toMatchObject({ change: { chatId: GROUP, added: false } })
      const onMessage = { type: "add", association: { type: "label_message", chatId: GROUP, messageId: "M1", labelId: "3" } } as never
      expect(yield* fromLabelAssociation(onMessage)).toEqual([])
    }))
})

describe("contacts: number checks and the people the connection learns about", () => {
  const setup = (list: Array<Record<string, unknown>>, mapped: Record<string, string> = {}) => {
    const queries: Array<USyncQuery> = []
    const stored: Array<unknown> = []
    const socket: ContactSocket = {
      executeUSyncQuery: async (query) => (queries.push(query), { list: list as never, sideList: [] }),
      signalRepository: {
        lidMapping: {
          getLIDForPN: async (pn) => mapped[pn] ?? null,
          storeLIDPNMappings: async (pairs) => void stored.push(...pairs)
        }
      }
    }
    return { queries, stored, contacts: makeContactOperations(socket) }
  }

  it.effect("one usync query (contact + LID protocols); exists, the chat id and the LID per number", () =>
    Effect.gen(function*() {
      const { contacts, queries, stored } = setup([
        { id: `${BOB}@s.whatsapp.net`, contact: true, lid: BOB_LID },
        { id: `${CAROL}@s.whatsapp.net`, contact: true },
        { id: "15559999999@s.whatsapp.net", contact: false }
      ], { [`${CAROL}@s.whatsapp.net`]: CAROL_LID })
      expect(yield* contacts.check([BOB, CAROL, "15559999999"])).toEqual([
        { number: BOB, exists: true, chatId: `${BOB}@c.us`, lid: BOB_LID },
        { number: CAROL, exists: true, chatId: `${CAROL}@c.us`, lid: CAROL_LID },
        { number: "15559999999", exists: false, chatId: null, lid: null }
      ])
      expect(queries[0]?.protocols.map((p) => p.name)).toEqual(["contact", "lid"])
      expect(queries[0]?.users.map((u) => u.phone)).toEqual([`+${BOB}`, `+${CAROL}`, "+15559999999"])
      expect(stored).toEqual([{ lid: BOB_LID, pn: `${BOB}@s.whatsapp.net` }])
    }))

  it.effect("the chat id is the account WhatsApp names, which may be another spelling of the number", () =>
    Effect.gen(function*() {
      // e.g. Brazil's old 8-digit mobile numbers: asked with the 9, answered without
      const { contacts } = setup([{ id: "551187654321@s.whatsapp.net", contact: true }])
      expect(yield* contacts.check(["5511987654321"])).toEqual([
        { number: "5511987654321", exists: true, chatId: "551187654321@c.us", lid: null }
      ])
    }))

  it.effect("contacts.upsert / update and lid-mapping.update → ContactsSeen with both ids as far as known", () =>
    Effect.gen(function*() {
      const events = yield* fromContacts([
        { id: BOB_LID, phoneNumber: `${BOB}@s.whatsapp.net`, notify: "Bob" },
        { id: CAROL_LID, notify: "Carol" },
        { id: `${ALICE}@s.whatsapp.net`, name: "Alice (saved)", notify: "Alice" },
        { id: GROUP, name: "Team" }
      ], mapping({ [CAROL_LID]: `${CAROL}@s.whatsapp.net` }))
      expect(events).toEqual([expect.objectContaining({
        _tag: "ContactsSeen",
        contacts: [
          { phone: `${BOB}@c.us`, lid: BOB_LID, name: "Bob" },
          { phone: `${CAROL}@c.us`, lid: CAROL_LID, name: "Carol" },
          { phone: `${ALICE}@c.us`, lid: null, name: "Alice (saved)" }
        ]
      })])
      expect(yield* contactSeenOf({ id: "status@broadcast" })).toBeNull()
      expect(yield* fromContacts([{ id: GROUP }])).toEqual([])
      expect(fromLidPairs([{ lid: BOB_LID, pn: `${BOB}@s.whatsapp.net` }])).toEqual([
        expect.objectContaining({ _tag: "ContactsSeen", contacts: [{ phone: `${BOB}@c.us`, lid: BOB_LID, name: null }] })
      ])
    }))
})
