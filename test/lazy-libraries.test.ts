import { describe, expect, it } from "@effect/vitest"
import { loadedWhenFirstUsed } from "../src/runtime/lazyLibraries.js"

describe("libraries loaded when first used", () => {
  it("a load that failed (a file handle short, a half-written install) is tried again at the next use; one that worked is never repeated", async () => {
    let loads = 0
    const load = loadedWhenFirstUsed(async () => {
      loads += 1
      if (loads === 1) throw new Error("EMFILE: too many open files")
      return { loadedAt: loads }
    })
    await expect(load()).rejects.toThrow("EMFILE")
    expect(await load()).toEqual({ loadedAt: 2 })
    expect(await load()).toEqual({ loadedAt: 2 })
    expect(loads).toBe(2)
  })

  it("callers that come while it loads share the one load", async () => {
    let loads = 0
    const load = loadedWhenFirstUsed(async () => ++loads)
    expect(await Promise.all([load(), load(), load()])).toEqual([1, 1, 1])
  })
})
