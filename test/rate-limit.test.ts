import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { startGateway, TEST_KEY, type TestGateway, useGateway } from "./support/gateway.js"
import { unavailable } from "./support/servers/availability.js"
import { freshPostgresUrlPromise } from "./support/servers/postgresDatabase.js"

/** The HTTP rate limit: per key once authenticated, per address for callers without a valid key. */
describe("rate limiting", () => {
  const gateway = useGateway({ rateLimitPerMinute: 5 })

  it("answers 429 RATE_LIMITED with Retry-After and RateLimit headers past the limit, and never limits health", async () => {
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await gateway().call("GET", "/api/sessions"))
    expect(answers.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect(answers.slice(0, 5).map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["4", "3", "2", "1", "0"])
    const refused = answers[5]!
    expect([refused.status, refused.body.code, refused.body.statusCode]).toEqual([429, "RATE_LIMITED", 429])
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.headers.get("ratelimit-limit")).toBe("5")
    expect(refused.headers.get("ratelimit-reset")).toBe(String(retryAfter))
    for (let i = 0; i < 8; i++) expect((await gateway().call("GET", "/api/health/ready")).status).toBe(200)
  })

  it("counts each key on its own, and callers without a valid key by address", async () => {
    // The admin key is spent by the test above; a caller with no key has a count of its own…
    expect((await gateway().call("GET", "/api/sessions", { key: null })).status).toBe(401)
    const statuses = []
    for (let i = 0; i < 6; i++) statuses.push((await gateway().call("GET", "/api/sessions", { key: `sb_unknown_${i}_0000000000000000000000000000000` })).status)
    // …which random keys share: they do not buy fresh counts, the address is counted.
    expect(statuses).toEqual([401, 401, 401, 401, 429, 429])
  })
})

describe("a key's own rate limit", () => {
  const gateway = useGateway({ rateLimitPerMinute: 3 })

  it("overrides RATE_LIMIT_PER_MINUTE for that key, up or down, and 0 means no limit", async () => {
    const make = async (rateLimitPerMinute: number) =>
      (await gateway().call("POST", "/api/auth/api-keys", { body: { name: `limit ${rateLimitPerMinute}`, role: "viewer", rateLimitPerMinute } })).body.key as string
    const strict = await make(1)
    const generous = await make(10)
    const unlimited = await make(0)
    const run = async (key: string, times: number) => {
      const statuses = []
      for (let i = 0; i < times; i++) statuses.push((await gateway().call("GET", "/api/sessions", { key })).status)
      return statuses
    }
    expect(await run(strict, 2)).toEqual([200, 429])
    expect(await run(generous, 6)).toEqual([200, 200, 200, 200, 200, 200])
    const free = await gateway().call("GET", "/api/sessions", { key: unlimited })
    expect(free.headers.get("ratelimit-limit")).toBeNull()
    expect(await run(unlimited, 10)).toEqual(Array(10).fill(200))
  })
})

describe.skipIf(unavailable("redis", "rate limits shared through Redis") !== undefined || unavailable("postgres", "gateways sharing a Store") !== undefined)(
  "rate limits shared through Redis",
  () => {
    const scope = Effect.runSync(Scope.make())
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

    it("two gateways on one Store and one Redis share one limit per key", async () => {
      const cacheUrl = process.env["TEST_REDIS_URL"]!
      const databaseUrl = await freshPostgresUrlPromise("ratelimit")
      const start = () =>
        Effect.runPromise(Scope.extend(startGateway({ cacheUrl, databaseUrl, rateLimitPerMinute: 4 }), scope)) as Promise<TestGateway>
      const one = await start()
      const two = await start()
      const statuses = []
      for (const gateway of [one, two, one, two, one]) statuses.push((await gateway.call("GET", "/api/sessions", { key: TEST_KEY })).status)
      expect(statuses).toEqual([200, 200, 200, 200, 429])
    })
  }
)
