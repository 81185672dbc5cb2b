import { Duration, Option } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { authenticatedRoutes, concretePath, describeRoute, probe } from "./support/accessControl.js"
import { readySession, TEST_KEY, useGateway } from "./support/gateway.js"

/**
 * Every authenticated route against every way a caller can be refused, with the exact status
 * and code; and, so the matrix cannot pass by refusing everyone, an admin key gets past the
 * check on every route. The socket peer is loopback, a trusted proxy here, so `X-Forwarded-For`
 * stands for the caller's address.
 */
describe("access control on every route", () => {
  const gateway = useGateway({
    security: { allowedCidrs: [], trustedProxies: ["127.0.0.1", "::1"], metricsToken: Option.none(), auditRetention: Duration.days(90) }
  })
  const keys = {} as Record<"viewer" | "scopedOperator" | "expired" | "revoked" | "ipLimited", string>
  let inScope = ""
  let outOfScope = ""

  const createKey = async (body: Record<string, unknown>) => {
    const created = await gateway().call("POST", "/api/auth/api-keys", { body })
    expect(created.status).toBe(201)
    return created.body as { id: string; key: string }
  }

  beforeAll(async () => {
    inScope = (await readySession(gateway(), "in-scope")).id
    outOfScope = (await readySession(gateway(), "out-of-scope")).id
    keys.viewer = (await createKey({ name: "viewer", role: "viewer" })).key
    keys.scopedOperator = (await createKey({ name: "scoped operator", role: "operator", allowedSessions: [inScope] })).key
    const expiring = await createKey({ name: "expiring", role: "admin", expiresAt: new Date(Date.now() + 1500).toISOString() })
    keys.expired = expiring.key
    const revoked = await createKey({ name: "revoked", role: "admin" })
    expect((await gateway().call("POST", `/api/auth/api-keys/${revoked.id}/revoke`)).body.status).toBe("revoked")
    keys.revoked = revoked.key
    keys.ipLimited = (await createKey({ name: "office only", role: "admin", allowedIps: ["203.0.113.0/24", "2001:db8::/32"] })).key
    // Long enough for the expiring key to be past its expiry.
    await new Promise((resolve) => setTimeout(resolve, 1600))
  })

  const routes = authenticatedRoutes()
  const outside = { "x-forwarded-for": "198.51.100.7" }

  interface Case {
    readonly name: string
    readonly applies: (route: (typeof routes)[number]) => boolean
    readonly headers: () => Record<string, string>
    readonly sessionId: () => string
    readonly expected: readonly [number, string]
  }
  const cases: ReadonlyArray<Case> = [
    { name: "no key", applies: () => true, headers: () => ({}), sessionId: () => inScope, expected: [401, "UNAUTHORIZED"] },
    {
      name: "wrong key",
      applies: () => true,
      headers: () => ({ "x-api-key": "sb_this_key_does_not_exist_0000000000000000000" }),
      sessionId: () => inScope,
      expected: [401, "UNAUTHORIZED"]
    },
    { name: "expired key", applies: () => true, headers: () => ({ "x-api-key": keys.expired }), sessionId: () => inScope, expected: [401, "UNAUTHORIZED"] },
    {
      name: "revoked key (as a bearer token)",
      applies: () => true,
      headers: () => ({ authorization: `Bearer ${keys.revoked}` }),
      sessionId: () => inScope,
      expected: [401, "UNAUTHORIZED"]
    },
    {
      name: "viewer on a write",
      applies: (route) => route.requiredRole !== "viewer",
      headers: () => ({ "x-api-key": keys.viewer }),
      sessionId: () => inScope,
      expected: [403, "FORBIDDEN"]
    },
    {
      name: "operator on a session outside its scope",
      applies: (route) => route.path.includes(":sessionId"),
      headers: () => ({ "x-api-key": keys.scopedOperator }),
      sessionId: () => outOfScope,
      expected: [403, "FORBIDDEN"]
    },
    {
      name: "operator on an admin route",
      applies: (route) => route.requiredRole === "admin",
      headers: () => ({ "x-api-key": keys.scopedOperator }),
      sessionId: () => inScope,
      expected: [403, "FORBIDDEN"]
    },
    {
      name: "key used from outside its allowedIps",
      applies: () => true,
      headers: () => ({ "x-api-key": keys.ipLimited, ...outside }),
      sessionId: () => inScope,
      expected: [403, "IP_NOT_ALLOWED"]
    }
  ]

  for (const refusal of cases) {
    it(`${refusal.name}: every route it applies to answers ${refusal.expected.join(" ")}`, async () => {
      const applicable = routes.filter(refusal.applies)
      expect(applicable.length).toBeGreaterThan(0)
      const answers: Array<string> = []
      for (const route of applicable) {
        const { code, status } = await probe(gateway().baseUrl, route.method, concretePath(route, refusal.sessionId()), refusal.headers())
        answers.push(`${describeRoute(route)} → ${status} ${code}`)
      }
      const expected = applicable.map((route) => `${describeRoute(route)} → ${refusal.expected.join(" ")}`)
      expect(answers).toEqual(expected)
    })
  }

  it("the same keys get past the check where they are allowed (the matrix is not refusing everyone)", async () => {
    const refusedStatuses = new Set([401, 403])
    const passes: Array<string> = []
    const noSuchSession = "0190d5e2-0000-7000-8000-00000000dead"
    for (const route of routes) {
      // The admin key on a session that does not exist: past authentication, then a 4xx of the route's own.
      const { code, status } = await probe(gateway().baseUrl, route.method, concretePath(route, noSuchSession), { "x-api-key": TEST_KEY })
      if (refusedStatuses.has(status)) passes.push(`${describeRoute(route)} → ${status} ${code}`)
    }
    expect(passes).toEqual([])
    const fromOffice = { "x-api-key": keys.ipLimited, "x-forwarded-for": "203.0.113.50" }
    expect((await probe(gateway().baseUrl, "GET", "/api/sessions", fromOffice)).status).toBe(200)
    expect((await probe(gateway().baseUrl, "GET", "/api/sessions", { ...fromOffice, "x-forwarded-for": "2001:db8::7" })).status).toBe(200)
    expect((await probe(gateway().baseUrl, "GET", `/api/sessions/${inScope}/messages`, { "x-api-key": keys.viewer })).status).toBe(200)
    expect((await probe(gateway().baseUrl, "GET", `/api/sessions/${inScope}/messages`, { "x-api-key": keys.scopedOperator })).status).toBe(200)
  })
})
