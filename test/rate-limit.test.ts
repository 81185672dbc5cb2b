import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { startGateway, type TestGateway, useGateway } from "./support/gateway.js"
import { unavailable } from "./support/servers/availability.js"

/** The HTTP rate limit per key, counted in the cache layer. */
describe("rate limiting", () => {
  const gateway = useGateway({ rateLimitPerMinute: 5 })

  it("answers 429 RATE_LIMITED with Retry-After past the limit, counts per key, and never limits health", async () => {
    const answers = []
    for (let i = 0; i < 6; i++) answers.push(await gateway().call("GET", "/api/sessions"))
    expect(answers.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect(answers.slice(0, 5).map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["4", "3", "2", "1", "0"])
    const refused = answers[5]!
    expect([refused.status, refused.body.code]).toEqual([429, "RATE_LIMITED"])
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(refused.headers.get("ratelimit-limit")).toBe("5")
    // Another credential has its own count (here: none, counted by address).
    expect((await gateway().call("GET", "/api/sessions", { key: null })).status).toBe(401)
    for (let i = 0; i < 3; i++) expect((await gateway().call("GET", "/api/health/ready")).status).toBe(200)
  })
})

describe.skipIf(unavailable("redis", "rate limits shared through Redis") !== undefined)("rate limits shared through Redis", () => {
  const scope = Effect.runSync(Scope.make())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  it("two gateways on one Redis share one limit", async () => {
    const cacheUrl = process.env["TEST_REDIS_URL"]!
    // A key of its own, so that no other test's count is shared.
    const key = `sb_ratelimit_${Date.now()}_0123456789abcdefghij`
    const start = () => Effect.runPromise(Scope.extend(startGateway({ cacheUrl, rateLimitPerMinute: 4 }), scope)) as Promise<TestGateway>
    const [one, two] = [await start(), await start()]
    const statuses = []
    for (const gateway of [one, two, one, two, one]) statuses.push((await gateway.call("GET", "/api/sessions", { key })).status)
    // The key is unknown, so each answer is a 401; the fifth, across both, is over the limit.
    expect(statuses).toEqual([401, 401, 401, 401, 429])
  })
})
