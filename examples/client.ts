/**
 * The typed client of a running gateway (`npx switchboard`): every REST operation as a typed
 * function, derived by `HttpApiClient` from the contract the gateway itself serves. Give it the
 * gateway's URL and an API key (SWITCHBOARD_URL, SWITCHBOARD_API_KEY). The package's smoke test
 * (test/package-smoke.test.ts) runs it against the packed package's `switchboard` command.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { SwitchboardApi } from "switchboard/client"

const baseUrl = process.env["SWITCHBOARD_URL"] ?? "http://127.0.0.1:2785"
const apiKey = process.env["SWITCHBOARD_API_KEY"] ?? ""

const program = Effect.gen(function*() {
  const switchboard = yield* HttpApiClient.make(SwitchboardApi, {
    baseUrl,
    // Every request carries the key; a wrong one fails with the contract's `Unauthorized`.
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", apiKey))
  })
  const created = yield* switchboard.sessions.create({ payload: { name: "support-line" } })
  console.log(`created session ${created.name} (${created.id}), ${created.status}`)
  // Without `page`/`limit` the list is a plain array; with them, items and their pagination.
  const listed = yield* switchboard.sessions.list({ urlParams: {} })
  const all = "items" in listed.data ? listed.data.items : listed.data
  console.log(`sessions: ${all.map((session) => session.name).join(", ")}`)
})

await Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
