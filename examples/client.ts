/**
 * The typed client of a running gateway (`npx switchboard`): every REST operation as a typed
 * function, derived from the contract the gateway itself serves. Give it the gateway's URL and an
 * API key (SWITCHBOARD_URL, SWITCHBOARD_API_KEY). The package's smoke test
 * (test/package-smoke.test.ts) runs it against the packed package's `switchboard` command.
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer } from "effect"
import { SwitchboardClient } from "switchboard/client"

const program = Effect.gen(function*() {
  const switchboard = yield* SwitchboardClient
  const created = yield* switchboard.sessions.create({ payload: { name: "support-line" } })
  console.log(`created session ${created.name} (${created.id}), ${created.status}`)
  // With `page`/`limit` (numbers; sent as the query string's text) a list answers its items and
  // their pagination; without them, a plain array.
  const listed = yield* switchboard.sessions.list({ urlParams: { page: 1, limit: 20 } })
  const all = "items" in listed.data ? listed.data.items : listed.data
  console.log(`sessions: ${all.map((session) => session.name).join(", ")}`)
  // A refusal is the contract's typed error: here a NotFound, caught by its tag.
  const missing = yield* switchboard.sessions.get({ path: { sessionId: "no-such-session" } }).pipe(
    Effect.catchTag("NotFound", (error) => Effect.succeed(error.code))
  )
  console.log(`an unknown session: ${typeof missing === "string" ? missing : "found?"}`)
})

const client = SwitchboardClient.layer({
  baseUrl: process.env["SWITCHBOARD_URL"] ?? "http://127.0.0.1:2785",
  apiKey: process.env["SWITCHBOARD_API_KEY"] ?? ""
}).pipe(Layer.provide(FetchHttpClient.layer))

await Effect.runPromise(program.pipe(Effect.provide(client)))
