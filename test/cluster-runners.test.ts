/**
 * Two runners of one cluster (real processes, CLUSTER=on, one Postgres, one Redis): sessions
 * are spread over them, and either runner's API serves every session as if it were its own:
 * the live event stream carries the events of sessions hosted elsewhere, and a key revoked on
 * one runner stops working on the other at once, not after its lookup cache expires.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./support/gateway.js"
import { hostedBy, type Runner, startCluster } from "./support/cluster.js"
import { useGatewayProcesses } from "./support/process.js"
import { unavailable } from "./support/servers/availability.js"
import { readEvents } from "./support/sse.js"

useGatewayProcesses()

describe.skipIf(unavailable("postgres", "cluster runners") ?? unavailable("redis", "cluster runners"))("a cluster of two runners", () => {
  let runners: ReadonlyArray<Runner>
  const sessionIds: Array<string> = []

  beforeAll(async () => {
    runners = (await startCluster(2)).runners
    for (let i = 0; i < 8; i++) {
      const created = await runners[i % 2]!.call("POST", "/api/sessions", { body: { name: `spread-${i}`, autoStart: true } })
      expect(created.status).toBe(201)
      sessionIds.push(created.body.id)
    }
    for (const id of sessionIds) {
      await eventually(() => runners[0]!.call("GET", `/api/sessions/${id}`), (r) => r.body.status === "ready", 30_000)
    }
  }, 90_000)

  it("hosts every session on exactly one runner, and both runners host some", async () => {
    // The shards are spread as the runners take them, a refresh at a time: a runner that joined
    // later may host nothing for a few seconds while the first still holds every shard.
    const [first, second] = await eventually(
      () => Promise.all(runners.map(hostedBy)),
      ([a, b]) => a!.size + b!.size === sessionIds.length && a!.size > 0 && b!.size > 0,
      25_000
    )
    expect([...first!].filter((id) => second!.has(id))).toEqual([])
    expect(new Set([...first!, ...second!])).toEqual(new Set(sessionIds))
    expect(first!.size).toBeGreaterThan(0)
    expect(second!.size).toBeGreaterThan(0)
  })

  it("streams, on each runner, the events of the sessions the other one hosts", async () => {
    const hosts = await Promise.all(runners.map(hostedBy))
    for (const [index, runner] of runners.entries()) {
      const elsewhere = sessionIds.find((id) => hosts[1 - index]!.has(id))!
      const stream = readEvents(runner, `?sessionId=${elsewhere}&events=message.sent`, 1)
      await new Promise((resolve) => setTimeout(resolve, 300))
      // Sent through the host's own API: the other runner learns of it only through the cluster.
      const sent = await runners[1 - index]!.call("POST", `/api/sessions/${elsewhere}/messages/send-text`, {
        body: { chatId: "15550004321@c.us", text: `to runner ${index}` }
      })
      expect(sent.status).toBe(201)
      const { frames, status } = await stream
      expect(status).toBe(200)
      expect(frames[0]).toMatchObject({ event: "message.sent", data: { sessionId: elsewhere, data: { message: { id: sent.body.messageId } } } })
    }
  })

  it("answers for a session hosted elsewhere: QR refusal, engine calls and stop/start go to the host", async () => {
    const hosts = await Promise.all(runners.map(hostedBy))
    const elsewhere = sessionIds.find((id) => hosts[1]!.has(id))!
    const asked = runners[0]!
    const qr = await asked.call("GET", `/api/sessions/${elsewhere}/qr`)
    expect([qr.status, qr.body.code]).toEqual([409, "SESSION_NOT_READY"])
    const checked = await asked.call("GET", `/api/sessions/${elsewhere}/contacts/check/15550001111`)
    expect(checked.status).toBe(200)
    const stopped = await asked.call("POST", `/api/sessions/${elsewhere}/stop`)
    expect([stopped.status, stopped.body.status]).toEqual([200, "stopped"])
    expect((await hostedBy(runners[1]!)).has(elsewhere)).toBe(false)
    const started = await asked.call("POST", `/api/sessions/${elsewhere}/start`)
    expect(started.status).toBe(200)
    await eventually(() => asked.call("GET", `/api/sessions/${elsewhere}`), (r) => r.body.status === "ready", 15_000)
    // Still where its shard is: the start went to the host, not to the runner that was asked.
    expect((await hostedBy(runners[1]!)).has(elsewhere)).toBe(true)
    expect((await hostedBy(runners[0]!)).has(elsewhere)).toBe(false)
  })

  it("keeps an engine's answers and refusals, with their status and code, for a session hosted elsewhere", async () => {
    const hosts = await Promise.all(runners.map(hostedBy))
    // Two sessions of one runner (one of the two hosts at least 4 of the 8), asked through the other.
    const host = hosts[0]!.size >= 2 ? 0 : 1
    const asked = runners[1 - host]!
    const [owner, member] = sessionIds.filter((id) => hosts[host]!.has(id))
    const memberPhone: string = (await asked.call("GET", `/api/sessions/${member}`)).body.phone
    const groups = (sessionId: string, path = "") => `/api/sessions/${sessionId}/groups${path}`

    // Under a loaded full run the host's Store has answered 503 (try again shortly) to this
    // create; a client tries again, and so does the test (the sandbox makes a second group).
    const create = () => asked.call("POST", groups(owner!), { body: { subject: "across runners", participants: [memberPhone] } })
    let created = await create()
    for (let retry = 0; retry < 8 && created.status === 503; retry++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      created = await create()
    }
    expect([created.status, created.body.subject, created.body.participants?.length], JSON.stringify(created.body)).toEqual([201, "across runners", 2])
    const groupId: string = created.body.id
    const seen = await eventually(() => asked.call("GET", groups(member!, `/${groupId}`)), (r) => r.status === 200)
    expect(seen.body.owner).toBe(created.body.owner)

    const answered = async (response: Promise<{ status: number; body: { code?: string } }>) => {
      const { body, status } = await response
      return `${status} ${body.code}`
    }
    expect(await answered(asked.call("PUT", groups(member!, `/${groupId}/description`), { body: { description: "mine now" } }))).toBe("403 NOT_GROUP_ADMIN")
    expect(await answered(asked.call("GET", groups(owner!, "/999999999999@g.us")))).toBe("404 GROUP_NOT_FOUND")
    expect(await answered(asked.call("POST", `/api/sessions/${owner}/labels`, { body: { name: "VIP" } }))).toBe("409 NOT_A_BUSINESS_ACCOUNT")
    // Linked: no QR shown, so no pairing code.
    expect(await answered(asked.call("POST", `/api/sessions/${owner}/pairing-code`, { body: { phoneNumber: "+15551234567" } }))).toBe(
      "409 SESSION_NOT_READY"
    )
  })

  it("stops accepting a key on every runner as soon as one runner revoked it", async () => {
    const created = await runners[0]!.call("POST", "/api/auth/api-keys", { body: { name: "short-lived", role: "viewer" } })
    expect(created.status).toBe(201)
    const key: string = created.body.key
    // The other runner has looked the key up, and would remember it for 5 s.
    expect((await runners[1]!.call("GET", "/api/sessions", { key })).status).toBe(200)
    const revoked = await runners[0]!.call("POST", `/api/auth/api-keys/${created.body.id}/revoke`)
    expect(revoked.status).toBe(200)
    const startedAt = Date.now()
    const refused = await eventually(() => runners[1]!.call("GET", "/api/sessions", { key }), (r) => r.status === 401, 1_500)
    expect(refused.body.code).toBe("UNAUTHORIZED")
    expect(Date.now() - startedAt).toBeLessThan(1_500)
  })
})

describe.skipIf(unavailable("postgres", "cluster backlog") ?? unavailable("redis", "cluster backlog"))("the outbound backlog in a cluster", () => {
  it("is counted where the session runs, shown and enforced by the runner that does not host it", async () => {
    // One send a minute: after the first, the session's sends wait their turn for the rest of the test.
    const { runners } = await startCluster(2, { SEND_RATE_PER_MINUTE: "1", OUTBOUND_BACKLOG_MAX: "3" }, "cluster backlog")
    const created = await runners[0]!.call("POST", "/api/sessions", { body: { name: "backlog-across", autoStart: true } })
    const sessionId: string = created.body.id
    await eventually(() => runners[0]!.call("GET", `/api/sessions/${sessionId}`), (r) => r.body.status === "ready", 30_000)
    const hosts = await eventually(() => Promise.all(runners.map(hostedBy)), ([a, b]) => a!.has(sessionId) || b!.has(sessionId))
    const asked = runners[hosts[0]!.has(sessionId) ? 1 : 0]!
    const host = runners[hosts[0]!.has(sessionId) ? 0 : 1]!
    const send = (text: string) =>
      asked.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: "15550004321@c.us", text } })
    const outboundOn = async (runner: Runner) => (await runner.call("GET", `/api/sessions/${sessionId}`)).body.outbound

    // The first send takes the session's turn at once; the next three wait for the next one.
    expect((await send("goes at once")).status).toBe(201)
    await eventually(() => outboundOn(asked), (outbound) => outbound.backlog === 0)
    for (const text of ["waits 1", "waits 2", "waits 3"]) expect((await send(text)).status).toBe(201)
    expect(await outboundOn(asked)).toEqual({ backlog: 3, max: 3 })
    expect(await outboundOn(host)).toEqual({ backlog: 3, max: 3 })
    // One more would wait for one of those to go out: one interval of the pacing, 60 s.
    const refused = await send("one too many")
    expect([refused.status, refused.body.code, refused.headers.get("retry-after")]).toEqual([429, "SESSION_BACKLOG_FULL", "60"])
    const refusedByHost = await host.call("POST", `/api/sessions/${sessionId}/messages/send-text`, { body: { chatId: "15550004321@c.us", text: "no" } })
    expect([refusedByHost.status, refusedByHost.body.code]).toEqual([429, "SESSION_BACKLOG_FULL"])
    expect((await asked.call("GET", `/api/sessions/${sessionId}/messages?direction=out`)).body.data).toHaveLength(4)
  }, 120_000)
})
