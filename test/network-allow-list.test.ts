import { ConfigProvider, Duration, Effect, Exit, Option } from "effect"
import { describe, expect, it } from "vitest"
import { settingsConfig } from "../src/app/Config.js"
import { type SecuritySettings } from "../src/domain/Settings.js"
import { clientAddress } from "../src/http/RequestTracking.js"
import { cidrProblem, networkList } from "../src/domain/cidr.js"
import { useGateway } from "./support/gateway.js"

const security = (overrides: Partial<SecuritySettings>): SecuritySettings => ({
  allowedCidrs: [],
  trustedProxies: [],
  metricsToken: Option.none(),
  auditRetention: Duration.days(90),
  ...overrides
})

describe("ALLOWED_CIDRS over real HTTP", () => {
  const closed = useGateway({ security: security({ allowedCidrs: ["10.0.0.0/8", "fd00::/8"] }) })
  const proxied = useGateway({
    security: security({ allowedCidrs: ["198.51.100.0/24", "2001:db8::/32"], trustedProxies: ["127.0.0.1/32", "::1"] })
  })
  const unproxied = useGateway({ security: security({ allowedCidrs: ["198.51.100.0/24"] }) })

  const refused = (answer: { status: number; body: any }) => [answer.status, answer.body.code]

  it("refuses callers outside the list with 403 IP_NOT_ALLOWED on every path, health and unknown routes included", async () => {
    for (const path of ["/api/health", "/api/health/ready", "/api/sessions", "/api/no-such-route", "/api/docs"]) {
      expect(refused(await closed().call("GET", path)), path).toEqual([403, "IP_NOT_ALLOWED"])
    }
    expect(refused(await closed().call("POST", "/api/sessions", { body: { name: "x" } }))).toEqual([403, "IP_NOT_ALLOWED"])
  })

  it("believes X-Forwarded-For only from a trusted proxy, read from the right", async () => {
    const from = (forwardedFor: string) => proxied().call("GET", "/api/sessions", { headers: { "x-forwarded-for": forwardedFor } })
    expect((await from("198.51.100.20")).status).toBe(200)
    expect((await from("2001:db8::1:5")).status).toBe(200)
    expect(refused(await from("203.0.113.9"))).toEqual([403, "IP_NOT_ALLOWED"])
    // A client that writes an allowed address itself: the proxy appends the real one, which is read first.
    expect(refused(await from("198.51.100.20, 203.0.113.9"))).toEqual([403, "IP_NOT_ALLOWED"])
    expect(refused(await from("garbage"))).toEqual([403, "IP_NOT_ALLOWED"])
    // The proxy itself (loopback) is not in the list: a request without the header is refused.
    expect(refused(await proxied().call("GET", "/api/sessions"))).toEqual([403, "IP_NOT_ALLOWED"])
    // Without trusted proxies, the header is ignored and the socket's address counts.
    const forged = await unproxied().call("GET", "/api/sessions", { headers: { "x-forwarded-for": "198.51.100.20" } })
    expect(refused(forged)).toEqual([403, "IP_NOT_ALLOWED"])
  })

  it("audits and counts a refused request under the endpoint it was for, as the router matches it", async () => {
    const allowedCaller = { "x-forwarded-for": "198.51.100.20" }
    const outsider = { "x-forwarded-for": "203.0.113.9" }
    const sessionId = (await proxied().call("POST", "/api/sessions", { body: { name: "walled" }, headers: allowedCaller })).body.id as string
    const refusedStart = await proxied().call("POST", `/api/sessions/${sessionId}/start`, { headers: outsider })
    const refusedUnknown = await proxied().call("POST", "/api/sessions/no/such/route", { headers: outsider })
    expect([refused(refusedStart), refused(refusedUnknown)]).toEqual([[403, "IP_NOT_ALLOWED"], [403, "IP_NOT_ALLOWED"]])

    const entries = (await proxied().call("GET", "/api/audit", { headers: allowedCaller })).body.data as Array<Record<string, unknown>>
    const recordOf = (answer: { headers: Headers }) => entries.find((entry) => entry.requestId === answer.headers.get("x-request-id"))
    expect(recordOf(refusedStart)).toMatchObject({
      action: "sessions.start",
      sessionId,
      clientIp: "203.0.113.9",
      keyId: null,
      outcome: "denied",
      status: 403,
      code: "IP_NOT_ALLOWED"
    })
    expect(recordOf(refusedUnknown)).toMatchObject({ action: "POST (no such route)", sessionId: null, status: 403 })

    const metrics = (await proxied().call("GET", "/api/metrics", { headers: allowedCaller })).body as string
    const requests = (route: string) =>
      metrics.split("\n").filter((line) =>
        line.startsWith("switchboard_http_requests_total{") && [`method="POST"`, `route="${route}"`, `status="403"`].every((label) => line.includes(label))
      ).map((line) => Number(line.split(" ").at(-1)))
    expect(requests("/api/sessions/:sessionId/start")).toEqual([1])
    expect(requests("unmatched")).toEqual([1])
  })
})

describe("client address and network lists", () => {
  const trusted = networkList(["10.0.0.0/8", "::1"])

  it("walks X-Forwarded-For from the right while the hop is a trusted proxy", () => {
    expect(clientAddress("::ffff:10.1.1.1", "203.0.113.5", trusted)).toBe("203.0.113.5")
    expect(clientAddress("::1", "198.51.100.1, 10.2.2.2", trusted)).toBe("198.51.100.1")
    expect(clientAddress("198.51.100.77", "10.0.0.1", trusted)).toBe("198.51.100.77")
    expect(clientAddress("10.1.1.1", undefined, trusted)).toBe("10.1.1.1")
    expect(clientAddress("10.1.1.1", "1.2.3.4, not-an-ip", trusted)).toBe("invalid")
    expect(clientAddress("10.1.1.1", "1.2.3.4", networkList([]))).toBe("10.1.1.1")
  })

  it("matches IPv4, IPv6 and IPv4-mapped addresses against CIDRs", () => {
    const list = networkList(["192.168.0.0/16", "2001:db8::/32", "203.0.113.7"])
    expect(["192.168.4.4", "::ffff:192.168.4.4", "2001:db8:ffff::1", "203.0.113.7"].map(list.contains)).toEqual([true, true, true, true])
    expect(["192.169.0.1", "203.0.113.8", "2001:db9::1", "", "localhost"].map(list.contains)).toEqual([false, false, false, false, false])
    expect(["10.0.0.0/8", "::/0", "1.2.3.4", "fe80::1"].map(cidrProblem)).toEqual([undefined, undefined, undefined, undefined])
    expect(["10.0.0.0/33", "2001:db8::/129", "10.0.0.0/x", "example.com", "1.2.3.4/8/9"].every((entry) => cidrProblem(entry) !== undefined)).toBe(true)
  })
})

describe("network settings", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSyncExit(settingsConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))

  it("reads comma- or space-separated lists and refuses to start on an entry that is not a network", () => {
    const read1 = read({ ALLOWED_CIDRS: "10.0.0.0/8, 2001:db8::/32  192.0.2.1", TRUSTED_PROXIES: "127.0.0.1" })
    expect(Exit.isSuccess(read1) && read1.value.security).toMatchObject({
      allowedCidrs: ["10.0.0.0/8", "2001:db8::/32", "192.0.2.1"],
      trustedProxies: ["127.0.0.1"]
    })
    for (const env of [{ ALLOWED_CIDRS: "10.0.0.0/33" }, { TRUSTED_PROXIES: "proxy.internal" }]) {
      const failed = read(env)
      expect(Exit.isFailure(failed)).toBe(true)
      expect(String(Exit.isFailure(failed) && failed.cause)).toContain("IPv4/IPv6 addresses or CIDRs")
    }
  })
})
