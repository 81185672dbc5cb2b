/**
 * Switchboard embedded in an Effect program, without HTTP: a session on the sandbox engine (no
 * phone needed), ready once it pairs, then a text sent to a chat. The README quotes this file,
 * and the package's smoke test (test/package-smoke.test.ts) runs it against the packed package.
 */
import { Effect } from "effect"
import { type ChatId, defaultSettings, Messaging, Sessions, SwitchboardCore } from "switchboard"
import { sandboxEngineLayer } from "switchboard/engines/sandbox"

const program = Effect.gen(function*() {
  const sessions = yield* Sessions
  const messaging = yield* Messaging
  const session = yield* sessions.create({ name: "bot", autoStart: true })
  yield* sessions.awaitStatus(session.id, (status) => status === "ready", "30 seconds")
  const sent = yield* messaging.sendText(session.id, { chatId: "15550001234@c.us" as ChatId, text: "hi" })
  console.log(`session ${session.name} sent message ${sent.messageId}`)
})

const settings = await Effect.runPromise(defaultSettings({ dataDir: "./data" }))
// Closing the scope drains: queued sends go out (within `shutdownTimeout`) before the store closes.
await Effect.runPromise(Effect.scoped(Effect.provide(program, SwitchboardCore(settings, sandboxEngineLayer(settings)))))
