import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { SqliteStoreLive } from "../src/layers/store/SqliteStore.js"
import { eventually, readySession, type TestGateway, useGateway } from "./support/gateway.js"

/** Groups over real HTTP between sandbox sessions. */
describe("groups", () => {
  const gateway = useGateway()
  type Session = { id: string; phone: string }
  let alpha: Session, beta: Session, gamma: Session, delta: Session
  let groupId: string
  const route = (session: Session, path = "") => `/api/sessions/${session.id}/groups${path}`
  const call = (method: string, path: string, body?: unknown) => gateway().call(method, path, body === undefined ? {} : { body })
  const roles = (group: { participants: Array<{ id: string; role: string }> }) =>
    Object.fromEntries(group.participants.map((p) => [p.id.replace("@c.us", ""), p.role]))

  beforeAll(async () => {
    ;[alpha, beta, gamma, delta] = await Promise.all(["g-alpha", "g-beta", "g-gamma", "g-delta"].map((name) => readySession(gateway(), name)))
  })

  it("creates a group with the participants that exist; every member sees it", async () => {
    const created = await call("POST", route(alpha), { subject: "Team", participants: [`+${beta.phone}`, gamma.phone, "15559990000"] })
    expect(created.status).toBe(201)
    groupId = created.body.id
    expect(groupId).toMatch(/^\d+@g\.us$/)
    expect(created.body).toMatchObject({ subject: "Team", owner: `${alpha.phone}@c.us` })
    expect(roles(created.body)).toEqual({ [alpha.phone]: "superadmin", [beta.phone]: "member", [gamma.phone]: "member" })
    const seen = await eventually(() => call("GET", route(beta)), (r) => r.body.data.some((g: { id: string }) => g.id === groupId))
    expect(seen.body.data.find((g: { id: string }) => g.id === groupId).subject).toBe("Team")
  })

  it("a message to the group reaches every other member and ends delivered", async () => {
    const sent = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: groupId, text: "hello team" } })
    expect(sent.status).toBe(201)
    for (const member of [beta, gamma]) {
      const inbox = await eventually(
        () => call("GET", `/api/sessions/${member.id}/messages?direction=in&chatId=${groupId}`),
        (r) => r.body.data.length === 1
      )
      expect(inbox.body.data[0]).toMatchObject({ chatId: groupId, from: `${alpha.phone}@c.us`, text: "hello team" })
    }
    await eventually(() => call("GET", `/api/sessions/${alpha.id}/messages/${sent.body.messageId}`), (r) => r.body.status === "delivered")
  })

  it("admins manage participants, subject and description; members may not", async () => {
    const promoted = await call("POST", route(alpha, `/${groupId}/participants/promote`), { participants: [beta.phone] })
    expect(promoted.status).toBe(200)
    expect(promoted.body.results).toEqual([{ id: `${beta.phone}@c.us`, status: 200, ok: true }])
    expect(roles((await call("GET", route(alpha, `/${groupId}`))).body)[beta.phone]).toBe("admin")

    const renamed = await call("PUT", route(beta, `/${groupId}/subject`), { subject: "Team A" })
    expect([renamed.status, renamed.body.subject]).toEqual([200, "Team A"])
    await eventually(() => call("GET", route(gamma, `/${groupId}`)), (r) => r.body.subject === "Team A")
    const described = await call("PUT", route(alpha, `/${groupId}/description`), { description: "the A team" })
    expect(described.body.description).toBe("the A team")

    const refused = await call("PUT", route(gamma, `/${groupId}/description`), { description: "mine now" })
    expect([refused.status, refused.body.code]).toEqual([403, "NOT_GROUP_ADMIN"])
    const notAdmin = await call("POST", route(gamma, `/${groupId}/participants`), { participants: [delta.phone] })
    expect([notAdmin.status, notAdmin.body.code]).toEqual([403, "NOT_GROUP_ADMIN"])
    const added = await call("POST", route(alpha, `/${groupId}/participants`), { participants: [delta.phone, "15559990001", gamma.phone] })
    expect(added.body.results).toEqual([
      { id: `${delta.phone}@c.us`, status: 200, ok: true },
      { id: "15559990001@c.us", status: 404, ok: false },
      { id: `${gamma.phone}@c.us`, status: 409, ok: false }
    ])
    await eventually(() => call("GET", route(delta)), (r) => r.body.data.some((g: { id: string }) => g.id === groupId))

    const demoted = await call("POST", route(alpha, `/${groupId}/participants/demote`), { participants: [beta.phone] })
    expect(demoted.body.results[0].ok).toBe(true)
    expect(roles((await call("GET", route(alpha, `/${groupId}`))).body)[beta.phone]).toBe("member")
  })

  it("invite codes: get, revoke (the old one stops working), join by code or link", async () => {
    await call("DELETE", route(alpha, `/${groupId}/participants`), { participants: [delta.phone] })
    const invite = await call("GET", route(alpha, `/${groupId}/invite-code`))
    expect(invite.body).toMatchObject({ groupId, code: expect.any(String), url: `https://chat.whatsapp.com/${invite.body.code}` })
    const revoked = await call("POST", route(alpha, `/${groupId}/invite-code/revoke`))
    expect(revoked.body.code).not.toBe(invite.body.code)
    const stale = await call("POST", route(delta, "/join"), { code: invite.body.code })
    expect([stale.status, stale.body.code]).toEqual([404, "INVITE_NOT_FOUND"])
    const joined = await call("POST", route(delta, "/join"), { code: revoked.body.url })
    expect([joined.status, joined.body.id]).toEqual([200, groupId])
    expect(roles(joined.body)[delta.phone]).toBe("member")
  })

  it("leaving and removing: the group is gone for who left, and the others see them go", async () => {
    expect((await call("POST", route(gamma, `/${groupId}/leave`))).status).toBe(204)
    const gone = await call("GET", route(gamma, `/${groupId}`))
    expect([gone.status, gone.body.code]).toEqual([404, "GROUP_NOT_FOUND"])
    const removed = await call("DELETE", route(alpha, `/${groupId}/participants`), { participants: [delta.phone] })
    expect(removed.body.results).toEqual([{ id: `${delta.phone}@c.us`, status: 200, ok: true }])
    const now = await call("GET", route(alpha, `/${groupId}`))
    expect(Object.keys(roles(now.body)).sort()).toEqual([alpha.phone, beta.phone].sort())
    // A removed member can no longer write to the group.
    await eventually(() => call("GET", route(delta)), (r) => r.body.data.every((g: { id: string }) => g.id !== groupId))
  })

  it("lists page on groups, and refuses bad ids and unknown groups in the error shape", async () => {
    await call("POST", route(alpha), { subject: "Second", participants: [beta.phone] })
    const page = await call("GET", `${route(alpha)}?page=1&limit=1`)
    expect(page.body.data.pagination).toEqual({ page: 1, limit: 1, total: 2, total_pages: 2 })
    expect(page.body.data.items).toHaveLength(1)
    for (const [path, status, code] of [
      ["/not-a-group", 400, "VALIDATION_FAILED"],
      ["/15551234567@c.us", 400, "VALIDATION_FAILED"],
      ["/999999999999@g.us", 404, "GROUP_NOT_FOUND"]
    ] as const) {
      const response = await call("GET", route(alpha, path))
      expect([response.status, response.body.code]).toEqual([status, code])
    }
    const empty = await call("POST", route(alpha), { subject: "", participants: [beta.phone] })
    expect([empty.status, empty.body.code]).toEqual([400, "VALIDATION_FAILED"])
    const groupAsMember = await call("POST", route(alpha), { subject: "x", participants: [groupId] })
    expect([groupAsMember.status, groupAsMember.body.code]).toEqual([400, "VALIDATION_FAILED"])
  })

  it("a stopped session still lists the groups it knew, and refuses changes with 409", async () => {
    await call("POST", `/api/sessions/${beta.id}/stop`)
    const listed = await call("GET", route(beta))
    expect(listed.body.data.map((g: { id: string }) => g.id)).toContain(groupId)
    const refused = await call("PUT", route(beta, `/${groupId}/subject`), { subject: "offline" })
    expect([refused.status, refused.body.code]).toEqual([409, "SESSION_NOT_READY"])
  })
})

/** Runs `statement` on the gateway's SQLite file through a connection of the test's own. */
const onStoreOf = (gateway: TestGateway, statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, statement).pipe(
    Effect.provide(SqliteStoreLive(gateway.settings.databaseUrl.replace(/^sqlite:/, ""))),
    Effect.orDie
  ))

describe("groups while the Store refuses to keep them", () => {
  const gateway = useGateway()

  it("a participant change the network made still answers with its results when keeping the group fails", async () => {
    const [alpha, beta, gamma] = await Promise.all(["gs-alpha", "gs-beta", "gs-gamma"].map((name) => readySession(gateway(), name)))
    const route = `/api/sessions/${alpha.id}/groups`
    const created = await gateway().call("POST", route, { body: { subject: "Kept", participants: [beta.phone] } })
    expect(created.status).toBe(201)
    const groupId = created.body.id as string

    // After the change, the gateway reads the group back and keeps it: that write fails, as
    // with a full disk, for this session's groups only.
    // (DDL takes no bound parameters; the id is a UUID the gateway made.)
    await onStoreOf(gateway(), (sql) => sql.unsafe(`CREATE TRIGGER refuse_groups BEFORE INSERT ON chat_groups
      WHEN NEW.session_id = '${alpha.id}' BEGIN SELECT RAISE(ABORT, 'the store refuses the write'); END`))
    const added = await gateway().call("POST", `${route}/${groupId}/participants`, { body: { participants: [gamma.phone] } })
    expect([added.status, added.body]).toEqual([200, { groupId, results: [{ id: `${gamma.phone}@c.us`, status: 200, ok: true }] }])

    await onStoreOf(gateway(), (sql) => sql`DROP TRIGGER refuse_groups`)
    const now = await eventually(() => gateway().call("GET", `${route}/${groupId}`), (r) => r.status === 200)
    expect(now.body.participants.map((p: { id: string }) => p.id)).toContain(`${gamma.phone}@c.us`)
  })
})
