import sharp from "sharp"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, useGateway } from "./support/gateway.js"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.js"

/**
 * What a group's admins do over real HTTP between sandbox sessions: settings (announce,
 * restrict, who may add, approval), the picture, and the requests to join by link.
 */
describe("group settings, pictures and join requests between sandbox sessions", () => {
  const gateway = useGateway({
    webhooks: { timeout: Duration.seconds(2), allowPrivate: true, concurrency: 8, perWebhookConcurrency: 2, perWebhookConcurrencyMax: 2, eventRetention: Duration.hours(1) }
  })
  let admin: { id: string; phone: string }
  let member: { id: string; phone: string }
  let outsider: { id: string; phone: string }
  let groupId: string
  let receiver: WebhookReceiver
  const call = (method: string, sessionId: string, route: string, body?: unknown) =>
    gateway().call(method, `/api/sessions/${sessionId}${route}`, body === undefined ? {} : { body })
  const group = (sessionId: string, route = "", method = "GET", body?: unknown) => call(method, sessionId, `/groups/${groupId}${route}`, body)

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    admin = await readySession(gateway(), "grp-admin")
    member = await readySession(gateway(), "grp-member")
    outsider = await readySession(gateway(), "grp-outsider")
    const hook = await gateway().call("POST", "/api/webhooks", { body: { url: receiver.url, events: ["group.request", "group.update", "contact.update"] } })
    receiver.setSecret(hook.body.secret)
    const created = await call("POST", admin.id, "/groups", { subject: "Club", participants: [member.phone] })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ memberAddMode: "admins", approval: false })
    groupId = created.body.id
  })
  afterAll(() => receiver.close())

  const delivered = (sessionId: string, event: string, match: (data: any) => boolean) =>
    eventually(async () => receiver.deliveries.filter((d) => d.event === event && d.sessionId === sessionId && match(d.data)), (found) => found.length > 0)

  it("changes the settings: the group shows them to every member, and a member hears group.update", async () => {
    const changed = await group(admin.id, "/settings", "PUT", { announce: true, memberAddMode: "all", approval: true })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({ announce: true, restrict: false, memberAddMode: "all", approval: true })
    await delivered(member.id, "group.update", (data) => data.groupId === groupId && data.update?.memberAddMode === "all")
    expect((await group(member.id)).body).toMatchObject({ announce: true, memberAddMode: "all", approval: true })
    expect((await group(admin.id, "/settings", "PUT", { announce: false })).body.announce).toBe(false)
  })

  it("refuses settings from a non-admin (403), an empty change (400), and a group one is not in (404)", async () => {
    const refused = await group(member.id, "/settings", "PUT", { restrict: true })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("NOT_GROUP_ADMIN")
    expect((await group(admin.id, "/settings", "PUT", {})).status).toBe(400)
    expect((await group(admin.id, "/settings", "PUT", { memberAddMode: "everyone" })).status).toBe(400)
    expect((await group(outsider.id, "/settings", "PUT", { announce: true })).status).toBe(404)
  })

  it("sets and removes the group's picture (a 640×640 JPEG members can fetch, outsiders cannot); non-admins are refused", async () => {
    const png = await sharp({ create: { width: 300, height: 900, channels: 3, background: "#336699" } }).png().toBuffer()
    const set = await group(admin.id, "/picture", "PUT", { media: { data: png.toString("base64") } })
    expect(set.status).toBe(204)
    await delivered(member.id, "contact.update", (data) => data.chatId === groupId && data.changes.picture === "changed")
    const image = await call("GET", member.id, `/contacts/${groupId}/picture?format=image`)
    expect(image.status).toBe(200)
    expect(await sharp(Buffer.from(image.body)).metadata()).toMatchObject({ format: "jpeg", width: 640, height: 640 })
    // Not "no picture" for someone outside the group: the group is not theirs to see.
    for (const format of ["json", "image"]) {
      const outside = await call("GET", outsider.id, `/contacts/${groupId}/picture?format=${format}`)
      expect(outside.status, format).toBe(404)
      expect(outside.body.code, format).toBe("GROUP_NOT_FOUND")
    }

    expect((await group(member.id, "/picture", "PUT", { media: { data: png.toString("base64") } })).status).toBe(403)
    expect((await group(member.id, "/picture", "DELETE")).status).toBe(403)
    expect((await group(admin.id, "/picture", "PUT", { media: { data: "bm90IGFuIGltYWdl" } })).body.code).toBe("INVALID_PICTURE")

    expect((await group(admin.id, "/picture", "DELETE")).status).toBe(204)
    expect((await call("GET", member.id, `/contacts/${groupId}/picture`)).body).toEqual({ url: null })
  })

  it("with approval on, joining by link asks the admins (group.request); approving adds the member", async () => {
    const code = (await group(admin.id, "/invite-code")).body.code as string
    const asked = await call("POST", outsider.id, "/groups/join", { code })
    expect(asked.status).toBe(409)
    expect(asked.body.code).toBe("JOIN_REQUEST_PENDING")
    await delivered(admin.id, "group.request", (data) => data.groupId === groupId && data.action === "created")

    const requests = await group(admin.id, "/requests")
    expect(requests.status).toBe(200)
    const pending = { id: `${outsider.phone}@c.us`, requestedAt: expect.any(String), method: "invite_link" }
    expect(requests.body).toEqual({ data: [pending] })
    // A list like every other: page and limit switch pagination on.
    expect((await group(admin.id, "/requests?page=2&limit=1")).body).toEqual({
      data: { items: [], pagination: { page: 2, limit: 1, total: 1, total_pages: 1 } }
    })
    expect((await group(member.id, "/requests")).status).toBe(403)
    expect((await group(member.id, "/requests/approve", "POST", { participants: [outsider.phone] })).status).toBe(403)

    const approved = await group(admin.id, "/requests/approve", "POST", { participants: [outsider.phone, member.phone] })
    expect(approved.status).toBe(200)
    expect(approved.body).toEqual({
      groupId,
      results: [{ id: `${outsider.phone}@c.us`, status: 200, ok: true }, { id: `${member.phone}@c.us`, status: 404, ok: false }]
    })
    await delivered(admin.id, "group.request", (data) => data.action === "approved" && data.participants.includes(`${outsider.phone}@c.us`))
    expect((await group(admin.id, "/requests")).body).toEqual({ data: [] })
    const seen = await eventually(() => group(outsider.id), (r) => r.status === 200)
    expect(seen.body.participants).toContainEqual({ id: `${outsider.phone}@c.us`, role: "member" })
  })

  it("with memberAddMode all a member adds people; rejecting a request drops it without adding anyone", async () => {
    const latecomer = await readySession(gateway(), "grp-latecomer")
    const code = (await group(admin.id, "/invite-code")).body.code as string
    expect((await call("POST", latecomer.id, "/groups/join", { code })).status).toBe(409)
    const rejected = await group(admin.id, "/requests/reject", "POST", { participants: [latecomer.phone] })
    expect(rejected.body.results).toEqual([{ id: `${latecomer.phone}@c.us`, status: 200, ok: true }])
    await delivered(admin.id, "group.request", (data) => data.action === "rejected")
    expect((await group(admin.id, "/requests")).body).toEqual({ data: [] })
    expect((await group(latecomer.id)).status).toBe(404)

    const added = await group(member.id, "/participants", "POST", { participants: [latecomer.phone] })
    expect(added.status).toBe(200)
    expect(added.body.results).toEqual([{ id: `${latecomer.phone}@c.us`, status: 200, ok: true }])
    // Back to admins only: the member's add is refused.
    await group(admin.id, "/settings", "PUT", { memberAddMode: "admins" })
    expect((await group(member.id, "/participants", "POST", { participants: [outsider.phone] })).status).toBe(403)
  })
})
