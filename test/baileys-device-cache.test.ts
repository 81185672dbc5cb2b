import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { StoreUnavailable } from "../src/domain/Errors.js"
import type { AuthState } from "../src/runtime/Engine.js"
import { DEVICES_KEY, DEVICES_TTL, makeDeviceCache } from "../src/runtime/engines/baileys/deviceCache.js"
import { authStoreLayer, realAuth } from "./support/authStore.js"

/**
 * Baileys' device lists kept in the session's auth keys (issue 21, point 3), on a real SQLite
 * Store: what one connection learnt, the next one (after a restart) still knows, until it ages.
 * The end-to-end proof, with real Baileys and the loopback peer, is baileys-rekey.test.ts.
 */

/** Bob's devices as Baileys keeps them: his phone and a linked device. */
const BOBS_DEVICES = [
  { user: "15551230002", device: 0, server: "s.whatsapp.net" },
  { user: "15551230002", device: 3, server: "s.whatsapp.net" }
]

describe("Baileys' userDevicesCache in the session's auth keys", () => {
  it.effect("what one connection stored, a connection after a restart finds (in the Store, not just in memory)", () =>
    Effect.gen(function*() {
      const auth = yield* realAuth
      const runtime = yield* Effect.runtime<never>()
      yield* Effect.promise(async () => makeDeviceCache(auth, runtime).mset!([{ key: "15551230002", value: BOBS_DEVICES }]))
      const afterRestart = makeDeviceCache(auth, runtime)
      expect(yield* Effect.promise(() => afterRestart.mget!(["15551230002", "15551230003"]))).toEqual({ "15551230002": BOBS_DEVICES })
      expect(yield* Effect.promise(async () => afterRestart.get("15551230002"))).toEqual(BOBS_DEVICES)
      // Stored beside the Signal keys, so a logout's wipe takes it too.
      expect(Object.keys(yield* auth.getKeys(DEVICES_KEY, ["15551230002"]))).toEqual(["15551230002"])
    }).pipe(Effect.provide(authStoreLayer())))

  it.effect("a list older than the TTL is asked for again; a device notification's delete is kept", () =>
    Effect.gen(function*() {
      const auth = yield* realAuth
      const runtime = yield* Effect.runtime<never>()
      let now = 1_000_000
      const cache = makeDeviceCache(auth, runtime, { now: () => now })
      yield* Effect.promise(async () => cache.set("15551230002", BOBS_DEVICES))
      now += Duration.toMillis(DEVICES_TTL) - 1
      expect(yield* Effect.promise(async () => makeDeviceCache(auth, runtime, { now: () => now }).get("15551230002"))).toEqual(BOBS_DEVICES)
      now += 1
      expect(yield* Effect.promise(async () => cache.get("15551230002"))).toBeUndefined()
      expect(yield* Effect.promise(async () => makeDeviceCache(auth, runtime, { now: () => now }).get("15551230002"))).toBeUndefined()

      yield* Effect.promise(async () => cache.set("15551230002", BOBS_DEVICES))
      yield* Effect.promise(async () => cache.del("15551230002"))
      expect(yield* Effect.promise(async () => makeDeviceCache(auth, runtime, { now: () => now }).get("15551230002"))).toBeUndefined()
    }).pipe(Effect.provide(authStoreLayer())))

  it.effect("a Store that cannot be reached is a miss and a skipped write, never a failed send", () =>
    Effect.gen(function*() {
      const runtime = yield* Effect.runtime<never>()
      const outage = new StoreUnavailable({ message: "database is locked" })
      const down: AuthState = {
        readCreds: Effect.fail(outage),
        writeCreds: () => Effect.fail(outage),
        getKeys: () => Effect.fail(outage),
        setKeys: () => Effect.fail(outage),
        clear: Effect.fail(outage)
      }
      const cache = makeDeviceCache(down, runtime)
      expect(yield* Effect.promise(() => cache.mget!(["15551230002"]))).toEqual({})
      yield* Effect.promise(async () => cache.set("15551230002", BOBS_DEVICES))
      // What this connection learnt it still uses while the Store is away.
      expect(yield* Effect.promise(async () => cache.get("15551230002"))).toEqual(BOBS_DEVICES)
    }))
})
