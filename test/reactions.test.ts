import { beforeAll, describe, expect, it } from "vitest"
import { eventually, readySession, useGateway } from "./support/gateway.js"

/** Reactions over real HTTP between two sandbox sessions, and how history shows them. */
describe("reactions", () => {
  const gateway = useGateway()
  let alpha: { id: string; phone: string }
  let beta: { id: string; phone: string }
  beforeAll(async () => {
    alpha = await readySession(gateway(), "react-alpha")
    beta = await readySession(gateway(), "react-beta")
  })

  const message = (sessionId: string, messageId: string) => gateway().call("GET", `/api/sessions/${sessionId}/messages/${messageId}`)
  const react = (sessionId: string, body: unknown) => gateway().call("POST", `/api/sessions/${sessionId}/messages/react`, { body })
  const reactionsAre = (sessionId: string, messageId: string, expected: ReadonlyArray<{ emoji: string; from: string }>) =>
    eventually(
      () => message(sessionId, messageId),
      (r) => JSON.stringify(r.body.reactions.map(({ emoji, from }: { emoji: string; from: string }) => ({ emoji, from }))) === JSON.stringify(expected)
    )

  /** Alpha writes to beta; both sides' ids of that message. */
  const exchange = async (text: string) => {
    const sent = await gateway().call("POST", `/api/sessions/${alpha.id}/messages/send-text`, { body: { chatId: beta.phone, text } })
    const inbox = await eventually(
      () => gateway().call("GET", `/api/sessions/${beta.id}/messages?direction=in&chatId=${alpha.phone}@c.us`),
      (r) => r.body.data.some((m: { text: string }) => m.text === text)
    )
    return { alphaId: sent.body.messageId as string, betaId: inbox.body.data.find((m: { text: string }) => m.text === text).id as string }
  }

  it("a reaction reaches the other side; changing it replaces it; \"\" takes it back on both sides", async () => {
    const { alphaId, betaId } = await exchange("react to this")
    const alphaChat = `${alpha.phone}@c.us`
    const betaChat = `${beta.phone}@c.us`

    const set = await react(beta.id, { chatId: alpha.phone, messageId: betaId, emoji: "👍" })
    expect(set.status).toBe(200)
    expect(set.body).toEqual({ messageId: betaId, chatId: alphaChat, emoji: "👍" })
    await reactionsAre(beta.id, betaId, [{ emoji: "👍", from: betaChat }])
    await reactionsAre(alpha.id, alphaId, [{ emoji: "👍", from: betaChat }])

    expect((await react(beta.id, { chatId: alpha.phone, messageId: betaId, emoji: "❤️" })).status).toBe(200)
    await reactionsAre(alpha.id, alphaId, [{ emoji: "❤️", from: betaChat }])

    // The sender reacts to its own message too: two people, two reactions.
    expect((await react(alpha.id, { chatId: beta.phone, messageId: alphaId, emoji: "😂" })).status).toBe(200)
    await reactionsAre(beta.id, betaId, [{ emoji: "❤️", from: betaChat }, { emoji: "😂", from: alphaChat }])

    expect((await react(beta.id, { chatId: alpha.phone, messageId: betaId, emoji: "" })).status).toBe(200)
    await reactionsAre(alpha.id, alphaId, [{ emoji: "😂", from: alphaChat }])
    await reactionsAre(beta.id, betaId, [{ emoji: "😂", from: alphaChat }])
  })

  it("history lists messages with their reactions joined, paged on messages", async () => {
    const texts = ["one", "two", "three"].map((t) => `paged ${t}`)
    for (const text of texts) {
      const { betaId } = await exchange(text)
      await react(beta.id, { chatId: alpha.phone, messageId: betaId, emoji: "🔥" })
    }
    const page = await eventually(
      () => gateway().call("GET", `/api/sessions/${alpha.id}/messages?direction=out&limit=2`),
      (r) => r.body.data.items.length === 2 && r.body.data.items.every((m: { reactions: unknown[] }) => m.reactions.length === 1)
    )
    expect(page.body.data.items.map((m: { text: string }) => m.text)).toEqual(["paged three", "paged two"])
    expect(page.body.data.pagination).toMatchObject({ page: 1, limit: 2 })
  })

  it("refuses bad reactions in the error shape of the contract", async () => {
    const { betaId } = await exchange("refusals")
    const cases: Array<[unknown, number, string]> = [
      [{ chatId: alpha.phone, messageId: betaId, emoji: "ab" }, 400, "VALIDATION_FAILED"],
      [{ chatId: alpha.phone, messageId: betaId, emoji: "👍👍" }, 400, "VALIDATION_FAILED"],
      [{ chatId: alpha.phone, messageId: betaId }, 400, "VALIDATION_FAILED"],
      [{ chatId: alpha.phone, messageId: "no-such-message", emoji: "👍" }, 404, "MESSAGE_NOT_FOUND"],
      // The message exists, but not in that chat.
      [{ chatId: "15550007777", messageId: betaId, emoji: "👍" }, 404, "MESSAGE_NOT_FOUND"]
    ]
    for (const [body, status, code] of cases) {
      const response = await react(beta.id, body)
      expect([response.status, response.body.code]).toEqual([status, code])
    }
    // Skin tones, ZWJ sequences and flags are one emoji each.
    for (const emoji of ["👍🏽", "👩‍👩‍👧", "🇧🇷"]) {
      expect((await react(beta.id, { chatId: alpha.phone, messageId: betaId, emoji })).status).toBe(200)
    }
    await gateway().call("POST", `/api/sessions/${beta.id}/stop`)
    const stopped = await react(beta.id, { chatId: alpha.phone, messageId: betaId, emoji: "👍" })
    expect([stopped.status, stopped.body.code]).toEqual([409, "SESSION_NOT_READY"])
  })
})
