import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { ChatId, InvalidChatId, SendTextRequest } from "../src/index.js"

describe("ChatId, made from what people type", () => {
  it("normalises a phone number written with spaces, dashes and parentheses to a person's chat id", () => {
    expect(ChatId.make("+1 555 000 1234")).toBe("15550001234@c.us")
    expect(ChatId.make("+1 (555) 000-1234")).toBe("15550001234@c.us")
    expect(ChatId.make("15550001234")).toBe("15550001234@c.us")
  })

  it("keeps full ids of people, groups, channels and LIDs as they are", () => {
    for (const id of ["15550001234@c.us", "120363012345678901@g.us", "120363012345678901@newsletter", "99887766@lid"]) {
      expect(ChatId.make(id)).toBe(id)
    }
  })

  it("refuses what could dial another number: a trunk (0), tabs or doubled separators, stray signs", () => {
    for (const input of ["+44 (0)20 7946 0001", "5550100\t5550101", "555  0100", "--123456--", "+ 123456", "(555) (000) 1234", "555-\n0100"]) {
      expect(Either.isLeft(ChatId.parse(input)), input).toBe(true)
    }
  })

  it("refuses garbage with a typed InvalidChatId", () => {
    for (const input of ["hello", "12@x.us", "1 2", "@c.us", "15550001234@s.whatsapp.net"]) {
      const refusal = Either.flip(ChatId.parse(input))
      expect(Either.getOrThrow(refusal)).toBeInstanceOf(InvalidChatId)
    }
    expect(() => ChatId.make("hello")).toThrow(InvalidChatId)
  })

  it.effect("fails an Effect with InvalidChatId when yielded", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.gen(function*() {
        return yield* ChatId.parse("not a number")
      }))
      expect(error._tag).toBe("InvalidChatId")
      expect(error.input).toBe("not a number")
    }))

  it("is what a send request takes, with no cast", () => {
    const request: SendTextRequest = { chatId: ChatId.make("+44 20 7946 0001"), text: "hi" }
    expect(request.chatId).toBe("442079460001@c.us")
    // The REST API takes digits (API.md): a written number there is a 400, not a guess.
    expect(Schema.decodeUnknownSync(SendTextRequest)({ chatId: "+442079460001", text: "hi" }).chatId).toBe("442079460001@c.us")
    expect(() => Schema.decodeUnknownSync(SendTextRequest)({ chatId: "+44 20 7946 0001", text: "hi" })).toThrow()
  })
})
