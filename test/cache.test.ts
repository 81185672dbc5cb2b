import { memoryCache, redisCache } from "../src/layers/cache/cacheLayers.js"
import { describe, expect, it } from "@effect/vitest"
import type { GroupMetadata } from "@whiskeysockets/baileys"
import { Cause, Context, Duration, Effect, Exit, Layer, Logger, Option, Runtime, Schedule, TestClock } from "effect"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import * as net from "node:net"
import { Cache, type CacheService, type CacheUnavailable } from "../src/runtime/ports/Cache.js"
import { GroupCache } from "../src/runtime/engines/baileys/groupEvents.js"
import { cachedPhoneOfLid, sharedGroupsOf } from "../src/runtime/engines/baileys/sharedCache.js"
import { makePacer } from "../src/runtime/Pacing.js"
import { serverUrl, unavailable } from "./support/servers/availability.js"

/**
 * The Cache contract, once in memory and once on Redis (the test server of the globalSetup),
 * with real time; then what only Redis has (several processes, the server going away), the
 * memory cache on the TestClock, and what the gateway keeps in the cache.
 */

const buildCache = (layer: Layer.Layer<Cache>) => Effect.map(Layer.build(layer), Context.get(Cache))

const redisSkip = unavailable("redis", "the Redis half of cache.test.ts")
/** Every Redis test writes under a prefix of its own: the server is shared by the whole run. */
const redisLayer = (prefix = `test:${randomUUID()}:`, options: { commandTimeoutMs?: number; startupWaitMs?: number } = {}) =>
  redisCache({ url: serverUrl("redis"), prefix, ...options })

const backends: ReadonlyArray<{
  readonly name: string
  readonly skip: string | false
  /** A new cache; with the same `shared` name, another client of the same one (on Redis: another process). */
  readonly layer: (shared?: string) => Layer.Layer<Cache>
}> = [
  { name: "memory", skip: false, layer: () => memoryCache() },
  { name: "Redis", skip: redisSkip ?? false, layer: (shared) => redisLayer(shared === undefined ? undefined : `test:${shared}:`) }
]

const sleep = (ms: number) => Effect.sleep(Duration.millis(ms))

/**
 * The slot `reserveSlot` gave, as a point in this process' time (read before the call: the
 * answer may wait for the event loop). Slots are not waited for here, so intervals can be long
 * next to the few ms this reading may be off by.
 */
const reserveAt = (cache: CacheService, key: string, intervalMs: number, jitterMaxMs?: number) =>
  Effect.suspend(() => {
    const before = Date.now()
    return Effect.map(cache.reserveSlot(key, intervalMs, jitterMaxMs), (wait) => before + wait)
  })

const gapsOf = (times: ReadonlyArray<number>) => {
  const sorted = [...times].sort((a, b) => a - b)
  return sorted.slice(1).map((at, i) => at - sorted[i]!)
}

const group = (id: string, members: ReadonlyArray<string>): GroupMetadata => ({
  id,
  subject: `group ${id}`,
  owner: undefined,
  participants: members.map((member) => ({ id: member, admin: null }))
})

for (const backend of backends) {
  describe.skipIf(backend.skip)(`Cache on ${backend.name}`, () => {
    it.scopedLive("keeps JSON values under keys until they are deleted", () =>
      Effect.gen(function*() {
        const cache = yield* buildCache(backend.layer())
        expect(yield* cache.get("nothing")).toEqual(Option.none())
        const value = { subject: "ünïcode ✓", members: [1, 2, 3], nested: { flag: true, none: null } }
        yield* cache.set("value", value, "1 minute")
        expect(yield* cache.get("value")).toEqual(Option.some(value))
        yield* cache.set("value", "replaced", "1 minute")
        expect(yield* cache.get<string>("value")).toEqual(Option.some("replaced"))
        yield* cache.set("zero", 0, "1 minute")
        expect(yield* cache.get("zero")).toEqual(Option.some(0))
        yield* cache.delete("value")
        yield* cache.delete("value")
        expect(yield* cache.get("value")).toEqual(Option.none())
        // what has no JSON form is a bug of the caller
        const undefinedValue = yield* Effect.exit(cache.set("undefined", undefined, "1 minute"))
        expect(Exit.isFailure(undefinedValue) && Cause.isDie(undefinedValue.cause)).toBe(true)
      }))

    it.scopedLive("lets entries expire after their TTL", () =>
      Effect.gen(function*() {
        const cache = yield* buildCache(backend.layer())
        yield* cache.set("short", "soon gone", "150 millis")
        yield* cache.set("long", "still here", "1 minute")
        expect(yield* cache.get("short")).toEqual(Option.some("soon gone"))
        yield* sleep(300)
        expect(yield* cache.get("short")).toEqual(Option.none())
        expect(yield* cache.get("long")).toEqual(Option.some("still here"))
      }))

    it.scopedLive("reserveSlot: the first slot at once, each next one an interval (plus jitter) later, and at once again when idle", () =>
      Effect.gen(function*() {
        const cache = yield* buildCache(backend.layer())
        const slots = yield* Effect.forEach([1, 2, 3, 4, 5, 6], () => reserveAt(cache, "slots", 1_000))
        gapsOf(slots).forEach((gap) => {
          expect(gap).toBeGreaterThanOrEqual(950)
          expect(gap).toBeLessThanOrEqual(1_050)
        })
        // the jitter only ever lengthens a slot
        const jittered = yield* Effect.forEach([1, 2, 3, 4, 5, 6], () => reserveAt(cache, "jittered", 1_000, 500))
        gapsOf(jittered).forEach((gap) => {
          expect(gap).toBeGreaterThanOrEqual(950)
          expect(gap).toBeLessThanOrEqual(1_550)
        })
        expect(new Set(gapsOf(jittered)).size).toBeGreaterThan(1)
        // other keys are sequences of their own; a sequence whose slots have passed is idle
        expect(yield* cache.reserveSlot("short", 200)).toBe(0)
        expect(yield* cache.reserveSlot("short", 200)).toBeGreaterThan(100)
        yield* sleep(450)
        expect(yield* cache.reserveSlot("short", 200)).toBe(0)
      }))

    it.scopedLive("reserveSlot: callers racing for one key never get slots closer than the interval", () =>
      Effect.gen(function*() {
        const cache = yield* buildCache(backend.layer())
        const caller = Effect.forEach(Array.from({ length: 8 }), () => reserveAt(cache, "raced", 1_000))
        const times = (yield* Effect.all([caller, caller, caller], { concurrency: "unbounded" })).flat()
        expect(times).toHaveLength(24)
        gapsOf(times).forEach((gap) => expect(gap).toBeGreaterThanOrEqual(950))
      }))

    it.scopedLive("hit: a fixed window allows `limit` hits, then refuses until it resets", () =>
      Effect.gen(function*() {
        const cache = yield* buildCache(backend.layer())
        const hits = yield* Effect.forEach([1, 2, 3, 4, 5], () => cache.hit("window", 3, 400))
        expect(hits.map((h) => [h.allowed, h.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0], [false, 0]])
        hits.forEach((h) => {
          expect(h.resetMs).toBeGreaterThan(0)
          expect(h.resetMs).toBeLessThanOrEqual(400)
        })
        // the window started with the first hit, not the last
        expect(hits[4]!.resetMs).toBeLessThanOrEqual(hits[0]!.resetMs)
        expect((yield* cache.hit("another", 3, 400)).remaining).toBe(2)
        yield* sleep(hits[4]!.resetMs + 50)
        expect(yield* cache.hit("window", 3, 400)).toMatchObject({ allowed: true, remaining: 2 })
      }))

    it.scopedLive("answers a ping", () =>
      Effect.gen(function*() {
        const cache = yield* buildCache(backend.layer())
        expect(Exit.isSuccess(yield* Effect.exit(cache.ping))).toBe(true)
        expect(cache.backend).toBe(backend.name === "memory" ? "memory" : "redis")
      }))

    it.scopedLive("paces one session for every lane that shares the cache (two gateways' lanes of one session)", () =>
      Effect.gen(function*() {
        // two processes: on Redis two clients of their own; in memory only fibers can share
        const shared = randomUUID()
        const first = yield* buildCache(backend.layer(shared))
        const second = backend.name === "memory" ? first : yield* buildCache(backend.layer(shared))
        const sessionId = `paced-${randomUUID()}`
        const lane = (cache: CacheService) =>
          Effect.gen(function*() {
            const pacer = yield* makePacer(sessionId, { sendsPerMinute: 400 }).pipe(Effect.provideService(Cache, cache))
            return yield* Effect.forEach([1, 2, 3, 4], () => pacer.paced(Effect.sync(() => Date.now())))
          })
        const started = Date.now()
        const times = (yield* Effect.all([lane(first), lane(second)], { concurrency: 2 })).flat()
        // 400 a minute: 150 ms apart, jittered up to 195 (less what a late timer takes off: the
        // slots are kept, a lane's timer firing late is not seen by the other)
        gapsOf(times).forEach((gap) => expect(gap).toBeGreaterThanOrEqual(130))
        expect(Math.max(...times) - started).toBeGreaterThanOrEqual(7 * 145)
      }))

    it.scopedLive("holds what the Baileys engine shares: group metadata for the next connection, LID answers", () =>
      Effect.gen(function*() {
        const cache = yield* buildCache(backend.layer())
        const runtime = yield* Effect.runtime<never>()
        const sessionId = `s-${randomUUID()}`
        const fetched: Array<string> = []
        const connection = (session = sessionId) => {
          const groups = new GroupCache(undefined, sharedGroupsOf(cache, session, runtime))
          groups.attach(async (jid) => (fetched.push(jid), group(jid, ["15550000009@s.whatsapp.net"])))
          return groups
        }
        /** The shared copy is written in the background. */
        const eventually = <A>(probe: () => Promise<A>, accept: (a: A) => boolean) =>
          Effect.promise(async () => {
            for (let i = 0; i < 100; i++) {
              const value = await probe()
              if (accept(value)) return value
              await new Promise((resolve) => setTimeout(resolve, 10))
            }
            return probe()
          })

        const first = connection()
        first.put(group("1@g.us", ["15550000001@s.whatsapp.net"]))
        // the next connection (a reconnect, another process) finds it without a fetch
        const seen = yield* eventually(() => connection().lookup("1@g.us"), (g) => g !== undefined)
        expect(seen?.participants.map((p) => p.id)).toEqual(["15550000001@s.whatsapp.net"])
        expect(fetched).toEqual([])
        // changes are written through…
        first.applyParticipants({ id: "1@g.us", action: "add", participants: [{ id: "15550000002@s.whatsapp.net" }] } as never)
        const grown = yield* eventually(() => connection().lookup("1@g.us"), (g) => g?.participants.length === 2)
        expect(grown?.participants.map((p) => p.id)).toEqual(["15550000001@s.whatsapp.net", "15550000002@s.whatsapp.net"])
        // …and a group left is forgotten: the next lookup fetches it
        first.forget("1@g.us")
        yield* eventually(() => Runtime.runPromise(runtime)(cache.get(`baileys:${sessionId}:group:1@g.us`)), Option.isNone)
        yield* Effect.promise(() => connection().lookup("1@g.us"))
        expect(fetched).toEqual(["1@g.us"])
        // another session's connection does not see this one's groups
        first.put(group("2@g.us", []))
        yield* eventually(() => connection().lookup("2@g.us"), (g) => g !== undefined)
        yield* Effect.promise(() => connection("another-session").lookup("2@g.us"))
        expect(fetched).toEqual(["1@g.us", "2@g.us"])

        const lookups: Array<string> = []
        const phoneOfLid = cachedPhoneOfLid(cache, sessionId, (lid) =>
          Effect.sync(() => (lookups.push(lid), lid.startsWith("111") ? Option.some("15550000001@s.whatsapp.net") : Option.none())))
        expect(yield* phoneOfLid("111@lid")).toEqual(Option.some("15550000001@s.whatsapp.net"))
        expect(yield* phoneOfLid("111@lid")).toEqual(Option.some("15550000001@s.whatsapp.net"))
        // what the mapping store does not know is asked again: it may learn it any time
        expect(yield* phoneOfLid("222@lid")).toEqual(Option.none())
        expect(yield* phoneOfLid("222@lid")).toEqual(Option.none())
        expect(lookups).toEqual(["111@lid", "222@lid", "222@lid"])
      }))
  })
}

describe("Cache in memory, on the TestClock", () => {
  it.effect("expires entries and frees slots by Effect's Clock", () =>
    Effect.gen(function*() {
      const cache = yield* Effect.scoped(buildCache(memoryCache()))
      yield* cache.set("entry", { a: 1 }, "1 minute")
      yield* TestClock.adjust("59 seconds")
      expect(yield* cache.get("entry")).toEqual(Option.some({ a: 1 }))
      yield* TestClock.adjust("1 second")
      expect(yield* cache.get("entry")).toEqual(Option.none())
      expect(yield* cache.reserveSlot("slot", 10_000)).toBe(0)
      expect(yield* cache.reserveSlot("slot", 10_000)).toBe(10_000)
      yield* TestClock.adjust("15 seconds")
      expect(yield* cache.reserveSlot("slot", 10_000)).toBe(5_000)
      expect((yield* cache.hit("limit", 1, 60_000)).allowed).toBe(true)
      expect(yield* cache.hit("limit", 1, 60_000)).toEqual({ allowed: false, remaining: 0, resetMs: 60_000 })
      yield* TestClock.adjust("1 minute")
      expect((yield* cache.hit("limit", 1, 60_000)).allowed).toBe(true)
    }))
})

/**
 * A TCP relay in front of the test Redis, which the test can cut (Redis "goes away": every
 * connection drops, new ones are refused) and restore on the same port.
 */
const relayTo = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const { hostname, port: targetPort } = new URL(target)
      const sockets = new Set<net.Socket>()
      const server = net.createServer((client) => {
        const upstream = net.connect(Number(targetPort), hostname)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("error", () => undefined)
          socket.on("close", () => {
            sockets.delete(socket)
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      const listen = (port: number) => new Promise<number>((resolve) => server.listen(port, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)))
      const port = await listen(0)
      return {
        url: `redis://127.0.0.1:${port}`,
        cut: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve())
            for (const socket of sockets) socket.destroy()
          }),
        restore: () => listen(port).then(() => undefined),
        close: () => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve())).then(() => sockets.forEach((s) => s.destroy()))
      }
    }),
    (relay) => Effect.promise(() => relay.close())
  )

/** Log lines (level and text) of what runs with this logger. */
const capturingLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label} ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** Waits (10 s at most) for the client to have reconnected. */
const untilAnswering = (cache: CacheService) => cache.ping.pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds"))))

const errorOf = <A>(effect: Effect.Effect<A, CacheUnavailable>) => Effect.flip(effect)

describe.skipIf(redisSkip ?? false)("Cache on Redis: sharing and outages", () => {
  it.scopedLive("namespaces its keys (switchboard:) and keeps values as JSON", () =>
    Effect.gen(function*() {
      const cache = yield* buildCache(redisCache({ url: serverUrl("redis") }))
      const raw = yield* Effect.acquireRelease(Effect.sync(() => new Redis(serverUrl("redis"))), (r) => Effect.promise(() => r.quit()))
      const key = `namespaced-${randomUUID()}`
      yield* cache.set(key, { json: true }, "10 seconds")
      expect(yield* Effect.promise(() => raw.get(`switchboard:${key}`))).toBe(`{"json":true}`)
      expect(yield* Effect.promise(() => raw.pttl(`switchboard:${key}`))).toBeGreaterThan(9_000)
      expect(yield* Effect.promise(() => raw.get(key))).toBeNull()
      yield* cache.delete(key)
    }))

  it.scopedLive("two processes (two clients of one Redis) never reserve slots closer than the interval", () =>
    Effect.gen(function*() {
      const prefix = `test:${randomUUID()}:`
      const processes = yield* Effect.forEach([1, 2, 3], () => buildCache(redisLayer(prefix)))
      const times = (yield* Effect.forEach(
        processes,
        (cache) => Effect.forEach(Array.from({ length: 10 }), () => reserveAt(cache, "shared", 1_000, 200)),
        { concurrency: "unbounded" }
      )).flat()
      expect(times).toHaveLength(30)
      gapsOf(times).forEach((gap) => {
        expect(gap).toBeGreaterThanOrEqual(950)
        expect(gap).toBeLessThanOrEqual(1_250)
      })
    }))

  it.scopedLive("Redis going away: operations fail with CacheUnavailable at once, nothing crashes, and it recovers", () =>
    Effect.gen(function*() {
      const logs = capturingLogs()
      const relay = yield* relayTo(serverUrl("redis"))
      const cache = yield* buildCache(redisCache({ url: relay.url, prefix: `test:${randomUUID()}:`, startupWaitMs: 2_000 })).pipe(
        Effect.provide(logs.layer)
      )
      yield* cache.set("before", 1, "1 minute")
      expect(yield* cache.get("before")).toEqual(Option.some(1))

      yield* Effect.promise(() => relay.cut())
      yield* sleep(100)
      const started = Date.now()
      const failures = yield* Effect.all([
        errorOf(cache.get("before")),
        errorOf(cache.set("during", 1, "1 minute")),
        errorOf(cache.delete("before")),
        errorOf(cache.reserveSlot("slot", 100)),
        errorOf(cache.hit("limit", 1, 1_000)),
        errorOf(cache.ping)
      ])
      expect(failures.map((f) => f._tag)).toEqual(Array(6).fill("CacheUnavailable"))
      expect(failures.map((f) => f.operation)).toEqual(["get", "set", "delete", "reserveSlot", "hit", "ping"])
      expect(Date.now() - started).toBeLessThan(1_000)

      yield* Effect.promise(() => relay.restore())
      yield* untilAnswering(cache)
      expect(yield* cache.get("before")).toEqual(Option.some(1))
      const warnings = logs.lines.filter((line) => line.startsWith("WARN"))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain("connection lost")
      expect(logs.lines.some((line) => line.includes("reachable again"))).toBe(true)
    }))

  it.scopedLive("a Redis that is not there at start: the layer builds, and operations fail with CacheUnavailable", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = net.createServer().listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as net.AddressInfo
            probe.close(() => resolve(port))
          })
        }))
      const logs = capturingLogs()
      const started = Date.now()
      const cache = yield* buildCache(redisCache({ url: `redis://:secret-password@127.0.0.1:${port}`, startupWaitMs: 300 })).pipe(
        Effect.provide(logs.layer)
      )
      expect(Date.now() - started).toBeLessThan(2_000)
      expect((yield* errorOf(cache.get("x")))._tag).toBe("CacheUnavailable")
      expect((yield* errorOf(cache.ping))._tag).toBe("CacheUnavailable")
      expect(logs.lines.filter((line) => line.startsWith("WARN"))).toHaveLength(1)
      expect(logs.lines.join("\n")).not.toContain("secret-password")
    }))

  it.scopedLive("pacing without the cache: each lane paces on its own, never faster, says so once, and goes back to the cache", () =>
    Effect.gen(function*() {
      const logs = capturingLogs()
      const relay = yield* relayTo(serverUrl("redis"))
      const cache = yield* buildCache(redisCache({ url: relay.url, prefix: `test:${randomUUID()}:`, startupWaitMs: 2_000 }))
      const pacer = yield* makePacer("outage", { sendsPerMinute: 600 }).pipe(Effect.provideService(Cache, cache))
      const send = pacer.paced(Effect.sync(() => Date.now())).pipe(Effect.provide(logs.layer))
      const before = yield* Effect.forEach([1, 2], () => send)
      yield* Effect.promise(() => relay.cut())
      const during = yield* Effect.forEach([1, 2, 3], () => send)
      yield* Effect.promise(() => relay.restore())
      yield* untilAnswering(cache)
      const after = yield* Effect.forEach([1, 2], () => send)
      gapsOf([...before, ...during, ...after]).forEach((gap) => expect(gap).toBeGreaterThanOrEqual(95))
      const warnings = logs.lines.filter((line) => line.includes("pacing") && line.startsWith("WARN"))
      expect(warnings).toHaveLength(1)
      expect(logs.lines.some((line) => line.includes("pacing: the cache answers again"))).toBe(true)
    }))
})
