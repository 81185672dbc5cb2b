import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, useGateway } from "./support/gateway.js"

/** Channels, labels and contact checks over real HTTP on the sandbox. */
describe("channels, labels and contacts", () => {
  const gateway = useGateway()
  type Session = { id: string; phone: string }
  let owner: Session, follower: Session
  const call = (method: string, path: string, body?: unknown) => gateway().call(method, path, body === undefined ? {} : { body })
  const api = (session: Session, path: string) => `/api/sessions/${session.id}${path}`

  beforeAll(async () => {
    ;[owner, follower] = await Promise.all(["c-owner", "c-follower"].map((name) => readySession(gateway(), name)))
  })

  it("channels: create, follow by invite code, post, read posts, unfollow, delete", async () => {
    const created = await call("POST", api(owner, "/channels"), { name: "Daily news", description: "one post a day" })
    expect(created.status).toBe(201)
    const channel = created.body
    expect(channel).toMatchObject({ name: "Daily news", description: "one post a day", role: "owner", id: expect.stringMatching(/@newsletter$/) })

    const followed = await call("POST", api(follower, "/channels/subscribe"), { inviteCode: `https://whatsapp.com/channel/${channel.inviteCode}` })
    expect([followed.status, followed.body.id, followed.body.role]).toEqual([200, channel.id, "subscriber"])
    expect((await call("GET", api(follower, "/channels"))).body.data.map((c: { id: string }) => c.id)).toEqual([channel.id])

    const post = await call("POST", api(owner, "/messages/send-text"), { chatId: channel.id, text: "first post" })
    expect(post.status).toBe(201)
    const received = await eventually(
      () => call("GET", api(follower, `/messages?chatId=${channel.id}`)),
      (r) => r.body.data.length === 1
    )
    expect(received.body.data[0]).toMatchObject({ chatId: channel.id, text: "first post", fromMe: false })
    const notOwner = await call("POST", api(follower, "/messages/send-text"), { chatId: channel.id, text: "me too" })
    await eventually(() => call("GET", api(follower, `/messages/${notOwner.body.messageId}`)), (r) => r.body.status === "failed")

    await call("POST", api(owner, "/messages/send-text"), { chatId: channel.id, text: "second post" })
    const posts = await eventually(() => call("GET", api(follower, `/channels/${channel.id}/messages?limit=1`)), (r) => r.body.data.items?.[0]?.text === "second post")
    expect(posts.body.data.items).toHaveLength(1)

    expect((await call("DELETE", api(follower, `/channels/${channel.id}`))).status).toBe(204)
    expect((await call("GET", api(follower, `/channels/${channel.id}`))).body.role).toBe("guest")
    expect((await call("DELETE", api(owner, `/channels/${channel.id}`))).status).toBe(204)
    const deleted = await call("GET", api(owner, `/channels/${channel.id}`))
    expect([deleted.status, deleted.body.code]).toEqual([404, "CHANNEL_NOT_FOUND"])
    const badId = await call("GET", api(owner, "/channels/123@g.us"))
    expect([badId.status, badId.body.code]).toEqual([400, "VALIDATION_FAILED"])
  })

  it("labels: refused on an account that is not a business account, then create, attach, detach", async () => {
    const refused = await call("POST", api(owner, "/labels"), { name: "VIP" })
    expect([refused.status, refused.body.code]).toEqual([409, "NOT_A_BUSINESS_ACCOUNT"])

    await Effect.runPromise(gateway().network.setBusiness(owner.id, true))
    const label = await call("POST", api(owner, "/labels"), { name: "VIP", color: 4 })
    expect(label.status).toBe(201)
    expect(label.body).toMatchObject({ name: "VIP", color: 4, id: expect.any(String) })
    const chat = `/labels/chat/${follower.phone}`
    const attached = await call("POST", api(owner, chat), { labelId: label.body.id })
    expect(attached.body).toEqual([label.body])
    expect((await call("GET", api(owner, chat))).body).toEqual([label.body])
    expect((await call("GET", api(owner, "/labels"))).body.data).toEqual([label.body])
    const detached = await call("DELETE", api(owner, `${chat}/${label.body.id}`))
    expect([detached.status, detached.body]).toEqual([200, []])
    const unknown = await call("POST", api(owner, chat), { labelId: "no-such-label" })
    expect([unknown.status, unknown.body.code]).toEqual([404, "LABEL_NOT_FOUND"])
    const badColor = await call("POST", api(owner, "/labels"), { name: "x", color: 20 })
    expect([badColor.status, badColor.body.code]).toEqual([400, "VALIDATION_FAILED"])
  })

  it("contacts: check a number, and list who the session knows with both ids", async () => {
    const known = await call("GET", api(owner, `/contacts/check/+${follower.phone}`))
    expect(known.body).toEqual({ number: follower.phone, exists: true, chatId: `${follower.phone}@c.us`, lid: expect.stringMatching(/@lid$/) })
    const unknown = await call("GET", api(owner, "/contacts/check/15559990000"))
    expect(unknown.body).toEqual({ number: "15559990000", exists: false, chatId: null, lid: null })
    const bad = await call("GET", api(owner, "/contacts/check/abc"))
    expect([bad.status, bad.body.code]).toEqual([400, "VALIDATION_FAILED"])

    const contacts = await call("GET", api(owner, "/contacts?limit=10"))
    expect(contacts.body.data.items).toContainEqual(expect.objectContaining({
      id: `${follower.phone}@c.us`,
      phone: `${follower.phone}@c.us`,
      lid: known.body.lid
    }))
    // Someone who writes becomes known too, with the ids their message came with.
    const stranger = await readySession(gateway(), "c-stranger")
    await call("POST", api(stranger, "/messages/send-text"), { chatId: owner.phone, text: "hi" })
    const ownerKnows = await eventually(
      () => call("GET", api(owner, "/contacts")),
      (r) => r.body.data.some((c: { id: string }) => c.id === `${stranger.phone}@c.us`)
    )
    expect(ownerKnows.body.data.find((c: { id: string }) => c.id === `${stranger.phone}@c.us`)).toMatchObject({
      phone: `${stranger.phone}@c.us`,
      lid: expect.stringMatching(/@lid$/)
    })
  })
})
