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
})
