import { describe, expect, it } from "vitest"
import { normaliseChatId } from "../src/domain/Ids.js"
import { uuidv7 } from "../src/domain/uuidv7.js"

describe("ids", () => {
  it("mints UUID v7s that sort in the order they were made, even within one millisecond", () => {
    const at = Date.now()
    const ids = Array.from({ length: 5_000 }, () => uuidv7(at))
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids.slice(0, 10)) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    // A later millisecond still sorts after.
    expect(uuidv7(at + 10) > ids.at(-1)!).toBe(true)
  })

  it("normalises what people type for a person into a chat id, and refuses the rest", () => {
    expect(normaliseChatId("+15551234567")).toBe("15551234567@c.us")
    expect(normaliseChatId(" 15551234567 ")).toBe("15551234567@c.us")
    expect(normaliseChatId("120363000000000000@g.us")).toBe("120363000000000000@g.us")
    expect(normaliseChatId("123@newsletter")).toBe("123@newsletter")
    expect(normaliseChatId("12345@lid")).toBe("12345@lid")
    for (const bad of ["", "abc", "+1", "1555@example.com", "1".repeat(20)]) expect(normaliseChatId(bad)).toBeNull()
  })
})
