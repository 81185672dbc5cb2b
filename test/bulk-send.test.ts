import { describe, expect, it } from "vitest"
import { eventually, readySession, useGateway } from "./support/gateway.js"
import { base64, pdf, png } from "./support/mediaSamples.js"

const texts = (n: number, chatId: string) => Array.from({ length: n }, (_, i) => ({ type: "text", chatId, text: `bulk ${i + 1}` }))

describe("bulk send", () => {
  const gateway = useGateway()

  it("accepts 1–100 messages as one batch (202), delivers them in order, and shows progress per item", async () => {
    const sender = await readySession(gateway(), "bulk-sender")
    const recipient = await readySession(gateway(), "bulk-recipient")
    const accepted = await gateway().call("POST", `/api/sessions/${sender.id}/messages/send-bulk`, { body: { messages: texts(5, `+${recipient.phone}`) } })
    expect(accepted.status).toBe(202)
    expect(accepted.body).toEqual({ batchId: expect.any(String), total: 5 })
    const batchId = accepted.body.batchId as string

    const done = await eventually(
      () => gateway().call("GET", `/api/sessions/${sender.id}/messages/batch/${batchId}`),
      (r) => r.body.status === "completed" && r.body.items.every((i: { status: string }) => i.status === "delivered")
    )
    expect(done.body).toMatchObject({ batchId, total: 5, sent: 5, failed: 0, pending: 0 })
    expect(done.body.items.map((i: { chatId: string }) => i.chatId)).toEqual(Array(5).fill(`${recipient.phone}@c.us`))
    const inbox = await eventually(
      () => gateway().call("GET", `/api/sessions/${recipient.id}/messages?direction=in`),
      (r) => r.body.data.length === 5
    )
    expect(inbox.body.data.map((m: { text: string }) => m.text).reverse()).toEqual(texts(5, "").map((t) => t.text))
    const first = await gateway().call("GET", `/api/sessions/${sender.id}/messages/${done.body.items[0].messageId}`)
    expect(first.body.batchId).toBe(batchId)
  })

  it("refuses a malformed batch whole: nothing of it is stored", async () => {
    const sender = await readySession(gateway(), "bulk-validator")
    const route = `/api/sessions/${sender.id}/messages/send-bulk`
    const bad = [
      { messages: [] },
      { messages: texts(101, "15550001111") },
      { messages: [...texts(2, "15550001111"), { type: "text", chatId: "nobody", text: "x" }] },
      { messages: [{ type: "image", chatId: "15550001111", text: "x" }] },
      {}
    ]
    for (const body of bad) {
      const refused = await gateway().call("POST", route, { body })
      expect(refused.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(refused.body.code).toBe("VALIDATION_FAILED")
    }
    expect((await gateway().call("GET", `/api/sessions/${sender.id}/messages`)).body.data).toEqual([])
  })

  it("carries media items like text ones, and refuses the whole batch when one item's media is wrong", async () => {
    const sender = await readySession(gateway(), "bulk-media-sender")
    const recipient = await readySession(gateway(), "bulk-media-recipient")
    const image = png("bulk image")
    const document = pdf("bulk document")
    const messages = [
      { type: "text", chatId: recipient.phone, text: "here come two files" },
      { type: "image", chatId: recipient.phone, media: { data: base64(image) }, caption: "the picture" },
      { type: "document", chatId: recipient.phone, media: { data: base64(document), filename: "notes.pdf" } }
    ]
    const accepted = await gateway().call("POST", `/api/sessions/${sender.id}/messages/send-bulk`, { body: { messages } })
    expect(accepted.status).toBe(202)
    const inbox = await eventually(
      () => gateway().call("GET", `/api/sessions/${recipient.id}/messages?direction=in`),
      (r) => r.body.data.length === 3
    )
    expect(inbox.body.data.map((m: { type: string }) => m.type).reverse()).toEqual(["text", "image", "document"])
    const [received] = inbox.body.data.filter((m: { type: string }) => m.type === "document")
    expect(received.media).toMatchObject({ mimetype: "application/pdf", filename: "notes.pdf", size: document.length })

    const wrong = [messages[0], { type: "video", chatId: recipient.phone, media: { data: base64(image) } }]
    const refused = await gateway().call("POST", `/api/sessions/${sender.id}/messages/send-bulk`, { body: { messages: wrong } })
    expect([refused.status, refused.body.code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"])
    expect((await gateway().call("GET", `/api/sessions/${sender.id}/messages`)).body.data).toHaveLength(3)
  })

  it("answers 404 for an unknown batch or another session's batch, and 409 for a session that cannot send", async () => {
    const owner = await readySession(gateway(), "bulk-owner")
    const other = await readySession(gateway(), "bulk-other")
    const accepted = await gateway().call("POST", `/api/sessions/${owner.id}/messages/send-bulk`, { body: { messages: texts(1, "15550001111") } })
    expect((await gateway().call("GET", `/api/sessions/${owner.id}/messages/batch/nope`)).body.code).toBe("BATCH_NOT_FOUND")
    expect((await gateway().call("GET", `/api/sessions/${other.id}/messages/batch/${accepted.body.batchId}`)).status).toBe(404)
    await gateway().call("POST", `/api/sessions/${other.id}/stop`)
    const refused = await gateway().call("POST", `/api/sessions/${other.id}/messages/send-bulk`, { body: { messages: texts(1, "15550001111") } })
    expect(refused.status).toBe(409)
    expect(refused.body.code).toBe("SESSION_NOT_READY")
  })
})

describe("bulk send with pacing", () => {
  const gateway = useGateway({ pacing: { sendsPerMinute: 6 } })

  it("cancel stops what has not gone out: those end failed with CANCELLED, the rest is untouched", async () => {
    const sender = await readySession(gateway(), "bulk-paced")
    const accepted = await gateway().call("POST", `/api/sessions/${sender.id}/messages/send-bulk`, { body: { messages: texts(4, "15550007777") } })
    const route = `/api/sessions/${sender.id}/messages/batch/${accepted.body.batchId}`
    // At 6 a minute the first goes out at once and the next waits ten seconds.
    await eventually(() => gateway().call("GET", route), (r) => r.body.status === "running")
    const cancelled = await gateway().call("POST", `${route}/cancel`)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ status: "cancelled", total: 4, failed: 3, pending: 0 })
    expect(cancelled.body.items.slice(1).map((i: { error: { code: string } }) => i.error.code)).toEqual(["CANCELLED", "CANCELLED", "CANCELLED"])
    expect(cancelled.body.items[0].status).not.toBe("failed")
    // Cancelling again changes nothing.
    expect((await gateway().call("POST", `${route}/cancel`)).body).toMatchObject({ status: "cancelled", failed: 3 })
  })
})
