import { Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import { offsetOf, parsePageQuery, toListBody } from "../src/domain/Pagination.js"
import { eventually, readySession, useGateway } from "./support/gateway.js"

const parse = (query: Parameters<typeof parsePageQuery>[0]) => Either.getOrThrow(parsePageQuery(query))

describe("the pagination convention, rule by rule", () => {
  it("1: without page and limit pagination is off and data is a plain array", () => {
    expect(parse({})).toEqual(Option.none())
    expect(toListBody(Option.none(), { items: [1, 2], total: 2 })).toEqual({ data: [1, 2] })
  })
  it("2: null, empty and missing count as absent; strings and numbers are parsed as integers", () => {
    expect(parse({ page: null, limit: "" })).toEqual(Option.none())
    expect(parse({ page: "null", limit: undefined })).toEqual(Option.none())
    expect(parse({ page: "3", limit: 7 })).toEqual(Option.some({ page: 3, limit: 7 }))
    expect(parse({ page: " 2 " })).toEqual(Option.some({ page: 2, limit: 20 }))
  })
  it("3: either parameter switches pagination on", () => {
    expect(Option.isSome(parse({ page: "1" }))).toBe(true)
    expect(Option.isSome(parse({ limit: "1" }))).toBe(true)
  })
  it("4: only page → limit 20", () => expect(parse({ page: "2" })).toEqual(Option.some({ page: 2, limit: 20 })))
  it("5: only limit → page 1", () => expect(parse({ limit: "5" })).toEqual(Option.some({ page: 1, limit: 5 })))
  it("6: page below 1 is raised to 1", () => {
    expect(parse({ page: "0" })).toEqual(Option.some({ page: 1, limit: 20 }))
    expect(parse({ page: "-4", limit: "3" })).toEqual(Option.some({ page: 1, limit: 3 }))
  })
  it("7: limit is kept within 1..100", () => {
    expect(parse({ limit: "500" })).toEqual(Option.some({ page: 1, limit: 100 }))
    expect(parse({ limit: "0" })).toEqual(Option.some({ page: 1, limit: 1 }))
  })
  it("8: skips (page - 1) * limit", () => expect(parse({ page: "4", limit: "25" }).pipe(Option.map(offsetOf))).toEqual(Option.some(75)))
  it("9–10: total is passed through and total_pages is ceil(total / limit)", () => {
    expect(toListBody(Option.some({ page: 2, limit: 3 }), { items: ["d", "e", "f"], total: 7 })).toEqual({
      data: { items: ["d", "e", "f"], pagination: { page: 2, limit: 3, total: 7, total_pages: 3 } }
    })
    expect(toListBody(Option.some({ page: 1, limit: 20 }), { items: [], total: 0 })).toEqual({
      data: { items: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } }
    })
  })
  it("rejects values that are not integers (the API answers 400 VALIDATION_FAILED)", () => {
    for (const bad of ["abc", "1.5", "1e3", "0x10", "--1"]) {
      expect(Either.isLeft(parsePageQuery({ page: bad })), bad).toBe(true)
      expect(Either.isLeft(parsePageQuery({ limit: bad })), bad).toBe(true)
    }
  })
})

describe("every list endpoint follows the convention over HTTP", () => {
  const gateway = useGateway()

  it("lists sessions as a plain array or as pages, with the status filter counted in total", async () => {
    for (let i = 0; i < 23; i++) await gateway().call("POST", "/api/sessions", { body: { name: `s${String(i).padStart(2, "0")}` } })
    const plain = await gateway().call("GET", "/api/sessions")
    expect(Array.isArray(plain.body.data)).toBe(true)
    expect(plain.body.data).toHaveLength(23)

    const onlyPage = await gateway().call("GET", "/api/sessions?page=2")
    expect(onlyPage.body.data.pagination).toEqual({ page: 2, limit: 20, total: 23, total_pages: 2 })
    expect(onlyPage.body.data.items.map((s: { name: string }) => s.name)).toEqual(["s20", "s21", "s22"])

    const onlyLimit = await gateway().call("GET", "/api/sessions?limit=5")
    expect(onlyLimit.body.data.pagination).toEqual({ page: 1, limit: 5, total: 23, total_pages: 5 })
    expect(onlyLimit.body.data.items.map((s: { name: string }) => s.name)).toEqual(["s00", "s01", "s02", "s03", "s04"])

    expect((await gateway().call("GET", "/api/sessions?limit=1000")).body.data.pagination.limit).toBe(100)
    expect((await gateway().call("GET", "/api/sessions?page=0&limit=0")).body.data.pagination).toMatchObject({ page: 1, limit: 1 })
    expect(Array.isArray((await gateway().call("GET", "/api/sessions?page=&limit=")).body.data)).toBe(true)
    expect((await gateway().call("GET", "/api/sessions?page=9")).body.data).toEqual({
      items: [],
      pagination: { page: 9, limit: 20, total: 23, total_pages: 2 }
    })
    const filtered = await gateway().call("GET", "/api/sessions?status=ready&limit=10")
    expect(filtered.body.data.pagination.total).toBe(0)
    expect((await gateway().call("GET", "/api/sessions?limit=x")).status).toBe(400)
  })

  it("pages messages on root records: each message brings its whole status history (rule 11)", async () => {
    const sender = await readySession(gateway(), "pager")
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const sent = await gateway().call("POST", `/api/sessions/${sender.id}/messages/send-text`, { body: { chatId: "15550004321", text: `m${i}` } })
      ids.push(sent.body.messageId)
    }
    // The echo contact answers each one: 10 messages, the sent ones with 4 history rows each.
    const all = await eventually(
      () => gateway().call("GET", `/api/sessions/${sender.id}/messages?direction=out&status=read`),
      (r) => r.body.data.length === 5
    )
    expect(all.body.data.every((m: { statusHistory: Array<unknown> }) => m.statusHistory.length === 4)).toBe(true)

    const page1 = await gateway().call("GET", `/api/sessions/${sender.id}/messages?direction=out&limit=2`)
    expect(page1.body.data.items).toHaveLength(2)
    expect(page1.body.data.pagination).toEqual({ page: 1, limit: 2, total: 5, total_pages: 3 })
    // Newest first.
    expect(page1.body.data.items.map((m: { text: string }) => m.text)).toEqual(["m4", "m3"])
    expect(page1.body.data.items[0].statusHistory.map((h: { status: string }) => h.status)).toEqual(["pending", "sent", "delivered", "read"])
    const page3 = await gateway().call("GET", `/api/sessions/${sender.id}/messages?direction=out&limit=2&page=3`)
    expect(page3.body.data.items.map((m: { text: string }) => m.text)).toEqual(["m0"])

    const everything = await gateway().call("GET", `/api/sessions/${sender.id}/messages?limit=100`)
    expect(everything.body.data.pagination.total).toBe(10)
    expect(everything.body.data.items).toHaveLength(10)
  })
})
