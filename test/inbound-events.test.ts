import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Ref } from "effect"
import { MediaStore } from "../src/runtime/ports/MediaStore.js"
import { MessageRepo } from "../src/runtime/ports/store/MessageRepo.js"
import { ContactRepo } from "../src/runtime/ports/store/ContactRepo.js"
import { CallRepo } from "../src/runtime/ports/store/CallRepo.js"
import type { CallStatus } from "../src/domain/Call.js"
import { defaultSessionSettings } from "../src/domain/SessionSettings.js"
import { EngineError, EngineEvent, type InboundMessage } from "../src/runtime/Engine.js"
import { handleEngineEvent } from "../src/runtime/InboundEvents.js"
import { inboundContext, withSessionStore } from "./support/inboundStore.js"

const inbound = (overrides: Partial<InboundMessage>): InboundMessage => ({
  engineMessageId: "3EB0AAAA",
  chatId: "15550002222@c.us",
  from: "15550002222@c.us",
  fromPhone: "15550002222@c.us",
  fromLid: "200000000000001@lid",
  type: "text",
  text: "hello",
  timestamp: new Date("2026-01-01T00:00:00.000Z"),
  ...overrides
})

describe("inbound messages from an engine", () => {
  it.scoped("stores an unreadable message as unknown with its error, and takes the content when it is resent readable", () =>
    withSessionStore({}, (seen) =>
      Effect.gen(function*() {
        const context = inboundContext()
        const deliver = (message: InboundMessage) => handleEngineEvent(EngineEvent.MessageReceived({ message }), context)

        yield* deliver(inbound({ type: "unknown", text: null, error: { code: "DECRYPTION_FAILED", message: "no session" } }))
        const messages = yield* MessageRepo
        const stored = Option.getOrThrow(yield* messages.findByEngineId("s1", "3EB0AAAA"))
        expect(stored).toMatchObject({ type: "unknown", text: null, error: { code: "DECRYPTION_FAILED" }, fromMe: false })

        yield* deliver(inbound({}))
        yield* deliver(inbound({})) // a plain duplicate changes nothing
        const revised = Option.getOrThrow(yield* messages.findById("s1", stored.id))
        expect(revised).toMatchObject({ type: "text", text: "hello", error: null })
        const list = yield* messages.list("s1", {}, Option.none())
        expect(list.total).toBe(1)

        const received = (yield* seen).filter((e) => e.event === "message.received")
        expect(received.map((e) => (e.data as { message: { type: string } }).message.type)).toEqual(["unknown", "text"])
        expect(received[1]!.data).toMatchObject({ phone: "15550002222@c.us", lid: "200000000000001@lid" })
      })))

  it.scoped("keeps received media in the media store; a failed or oversized download keeps the message, marked", () =>
    withSessionStore({}, () =>
      Effect.gen(function*() {
        const bytes = new Uint8Array([1, 2, 3, 4, 5])
        const downloads: Array<unknown> = []
        const context = inboundContext({
          media: { incoming: "store", maxBytes: 10, keepRevoked: false },
          downloadMedia: (media) =>
            Effect.suspend(() => {
              downloads.push(media.ref)
              return media.ref === "gone"
                ? Effect.fail(new EngineError({ code: "MEDIA_GONE", message: "the media expired", transient: false }))
                : Effect.succeed(media.ref === "big" ? new Uint8Array(11) : bytes)
            })
        })
        const image = (engineMessageId: string, ref: string, size: number | null) =>
          handleEngineEvent(EngineEvent.MessageReceived({
            message: inbound({
              engineMessageId,
              type: "image",
              text: null,
              caption: "a picture",
              media: { mimetype: "image/png", filename: null, size, ptt: false, ref }
            })
          }), context)
        const messages = yield* MessageRepo
        const store = yield* MediaStore
        const stored = (engineMessageId: string) => Effect.map(messages.findByEngineId("s1", engineMessageId), Option.getOrThrow)

        yield* image("OK", "ok", 5)
        const ok = yield* stored("OK")
        expect(ok).toMatchObject({ type: "image", caption: "a picture", media: { size: 5, stored: true }, error: null })
        expect(Option.getOrThrow(yield* store.read(`s1/${ok.id}`))).toEqual(bytes)

        yield* image("GONE", "gone", 5)
        expect(yield* stored("GONE")).toMatchObject({ media: { stored: false }, error: { code: "MEDIA_DOWNLOAD_FAILED" } })

        // Announced too large: not even downloaded. Larger than announced: downloaded, not kept.
        yield* image("BIG", "never", 11)
        yield* image("LIAR", "big", 5)
        expect(yield* stored("BIG")).toMatchObject({ media: { stored: false }, error: { code: "MEDIA_TOO_LARGE" } })
        expect(yield* stored("LIAR")).toMatchObject({ media: { stored: false }, error: { code: "MEDIA_TOO_LARGE" } })
        expect(downloads).toEqual(["ok", "gone", "big"])

        // First unreadable, then resent readable: the same message takes the media.
        yield* handleEngineEvent(EngineEvent.MessageReceived({
          message: inbound({ engineMessageId: "LATE", type: "unknown", text: null, error: { code: "DECRYPTION_FAILED", message: "no session" } })
        }), context)
        yield* image("LATE", "ok", 5)
        const late = yield* stored("LATE")
        expect(late).toMatchObject({ type: "image", caption: "a picture", media: { stored: true }, error: null })
        expect(Option.isSome(yield* store.read(`s1/${late.id}`))).toBe(true)
      })))
})

describe("contact changes and blocked senders", () => {
  it.scoped("keeps a contact's change heard from the network (contact.update) and drops messages from a blocked sender", () =>
    withSessionStore({}, (seen) =>
      Effect.gen(function*() {
        const context = inboundContext()
        const heard = (change: { blocked?: boolean; pushName?: string }) =>
          handleEngineEvent(EngineEvent.ContactsChanged({ changes: [{ chatId: "15550002222@c.us", ...change }] }), context)
        const messages = yield* MessageRepo
        const contacts = yield* ContactRepo

        // Blocked on the phone: WhatsApp may still hand over what they send, which is dropped.
        yield* heard({ pushName: "Carol", blocked: true })
        expect(Option.getOrThrow(yield* contacts.find("s1", "15550002222@c.us"))).toMatchObject({ pushName: "Carol", blocked: true })
        yield* handleEngineEvent(EngineEvent.MessageReceived({ message: inbound({}) }), context)
        expect((yield* messages.list("s1", {}, Option.none())).total).toBe(0)

        yield* heard({ blocked: false })
        yield* handleEngineEvent(EngineEvent.MessageReceived({ message: inbound({ engineMessageId: "3EB0BBBB" }) }), context)
        expect((yield* messages.list("s1", {}, Option.none())).total).toBe(1)

        const updates = (yield* seen).filter((e) => e.event === "contact.update").map((e) => e.data)
        expect(updates).toEqual([
          { chatId: "15550002222@c.us", changes: { pushName: "Carol", blocked: true } },
          { chatId: "15550002222@c.us", changes: { blocked: false } }
        ])
      })))
})

describe("calls from an engine", () => {
  it.scoped("rejectCalls answers a caller with the message unless the account blocked them; a change to a call never offered is ignored", () =>
    withSessionStore({ settings: { ...defaultSessionSettings("recent"), rejectCalls: true, rejectCallMessage: "Please write instead." } }, (seen) =>
      Effect.gen(function*() {
        const rejected = yield* Ref.make<ReadonlyArray<string>>([])
        const queued = yield* Ref.make<ReadonlyArray<string>>([])
        const context = inboundContext({
          rejectCall: (callId) => Ref.update(rejected, (ids) => [...ids, callId]),
          queueSend: (row) => Ref.update(queued, (ids) => [...ids, row.id])
        })
        const call = (callId: string, from: string, status: CallStatus) =>
          handleEngineEvent(EngineEvent.CallChanged({ call: { callId, from, isVideo: false, isGroup: false, status, at: new Date() } }), context)
        const calls = yield* CallRepo
        const messages = yield* MessageRepo
        yield* (yield* ContactRepo).setBlocked("s1", "15550002222@c.us", true)

        yield* call("CALLBLOCKED", "15550002222@c.us", "offer")
        expect(yield* Ref.get(rejected)).toEqual(["CALLBLOCKED"])
        expect(Option.getOrThrow(yield* calls.find("s1", "CALLBLOCKED")).status).toBe("reject")
        expect(yield* Ref.get(queued)).toEqual([])
        expect((yield* messages.list("s1", {}, Option.none())).total).toBe(0)

        yield* call("CALLFRIEND", "15550003333@c.us", "offer")
        expect(yield* Ref.get(queued)).toHaveLength(1)
        expect((yield* messages.list("s1", { chatId: "15550003333@c.us" }, Option.none())).items[0]).toMatchObject({ text: "Please write instead." })

        // e.g. the reject of a call this account placed: no call of its log
        yield* call("CALLPLACED", "15550004444@c.us", "reject")
        expect(yield* calls.find("s1", "CALLPLACED")).toEqual(Option.none())
        const announced = (yield* seen).filter((e) => e.event.startsWith("call."))
        expect(announced.some((e) => JSON.stringify(e.data).includes("CALLPLACED"))).toBe(false)
        expect(announced.map((e) => e.event)).toEqual(["call.received", "call.update", "call.received", "call.update"])
      })))
})
