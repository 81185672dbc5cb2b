import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
// As a program that only calls a gateway imports it: the client's own entry.
import { NotFound, SwitchboardClient } from "../src/entry/client.js"
import { startGateway, TEST_KEY } from "./support/gateway.js"

/** The client of the gateway at `baseUrl`, over real HTTP (fetch) on loopback. */
const clientOf = (baseUrl: string, apiKey: string) =>
  SwitchboardClient.layer({ baseUrl, apiKey }).pipe(Layer.provide(FetchHttpClient.layer))

describe("the typed client, against a real gateway over loopback", () => {
  it.scoped("creates a session, lists it, and receives a 404 as a typed NotFound", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      yield* Effect.gen(function*() {
        const client = yield* SwitchboardClient
        const created = yield* client.sessions.create({ payload: { name: "from-the-client" } })
        expect(created.name).toBe("from-the-client")
        expect(created.status).toBe("created")

        const listed = yield* client.sessions.list({ urlParams: {} })
        expect("items" in listed.data ? "paged" : listed.data.map((session) => session.id)).toContain(created.id)

        const missing = yield* Effect.flip(client.sessions.get({ path: { sessionId: "no-such-session" } }))
        expect(missing).toBeInstanceOf(NotFound)
        expect(missing._tag === "NotFound" && missing.code).toBe("SESSION_NOT_FOUND")
      }).pipe(Effect.provide(clientOf(gateway.baseUrl, TEST_KEY)))
    }))

  it.scoped("sends the key it was given: a wrong one is refused with a typed Unauthorized", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      const refused = yield* Effect.flip(Effect.flatMap(SwitchboardClient, (client) => client.sessions.list({ urlParams: {} }))).pipe(
        Effect.provide(clientOf(gateway.baseUrl, "sb_not_a_key_of_this_gateway_0123456789abcdef"))
      )
      expect(refused._tag).toBe("Unauthorized")
    }))

  it.scoped("lists a page with numeric page and limit, which go as the query string's text; bad text is still a 400", () =>
    Effect.gen(function*() {
      const gateway = yield* startGateway()
      yield* Effect.gen(function*() {
        const client = yield* SwitchboardClient
        for (let i = 0; i < 12; i++) yield* client.sessions.create({ payload: { name: `paged-${String(i).padStart(2, "0")}` } })

        const second = yield* client.sessions.list({ urlParams: { page: 2, limit: 5 } })
        expect("items" in second.data && second.data.pagination).toEqual({ page: 2, limit: 5, total: 12, total_pages: 3 })
        expect("items" in second.data && second.data.items.map((session) => session.name)).toEqual(
          ["paged-05", "paged-06", "paged-07", "paged-08", "paged-09"]
        )
        // the convention still applies to numbers: page raised to 1, limit capped at 100, an undefined limit the default
        const clamped = yield* client.sessions.list({ urlParams: { page: 0, limit: 1000 } })
        expect("items" in clamped.data && clamped.data.pagination).toEqual({ page: 1, limit: 100, total: 12, total_pages: 1 })
        const onlyPage = yield* client.sessions.list({ urlParams: { page: 1, limit: undefined } })
        expect("items" in onlyPage.data && onlyPage.data.pagination).toEqual({ page: 1, limit: 20, total: 12, total_pages: 1 })
        // @ts-expect-error page is a number in the contract's type, not the query string's text
        yield* Effect.flip(client.sessions.list({ urlParams: { page: "2" } }))
      }).pipe(Effect.provide(clientOf(gateway.baseUrl, TEST_KEY)))

      for (const [query, message] of [["page=abc", "page must be an integer, got \"abc\""], ["limit=1.5", "limit must be an integer, got \"1.5\""]]) {
        const raw = yield* Effect.promise(() => gateway.call("GET", `/api/sessions?${query}`))
        expect(raw.status, query).toBe(400)
        expect(raw.body).toMatchObject({ statusCode: 400, code: "VALIDATION_FAILED", message })
      }
    }))
})
