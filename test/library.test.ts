import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option, Stream } from "effect"
// Everything comes from the package's public entries (`switchboard`, `switchboard/engines/sandbox`), as a library user would import it.
import { ChatId, defaultSettings, Events, Messaging, Sessions, SwitchboardCore } from "../src/index.js"
import { sandboxEngineLayer } from "../src/entry/sandbox.js"
import { tempDir } from "./support/gateway.js"

describe("Switchboard embedded in an Effect program, without HTTP", () => {
  it.live("creates a sandbox session, waits for ready, sends a message and receives the echo", () =>
    Effect.gen(function*() {
      const dataDir = tempDir()
      const settings = yield* defaultSettings({ dataDir, databaseUrl: `sqlite:${dataDir}/sb.db`, sandboxPairDelay: Duration.millis(20) })
      const program = Effect.gen(function*() {
        const sessions = yield* Sessions
        const messaging = yield* Messaging
        const events = yield* Events
        const feed = yield* events.subscribe

        const session = yield* sessions.create({ name: "embedded", autoStart: true })
        const ready = yield* sessions.awaitStatus(session.id, (status) => status === "ready", "10 seconds")
        expect(ready.status).toBe("ready")

        const echo = "15550007777@c.us" as ChatId
        const sent = yield* messaging.sendText(session.id, { chatId: echo, text: "hello from a library" })
        const received = yield* feed.pipe(
          Stream.filter((event) => event.event === "message.received"),
          Stream.runHead,
          Effect.timeout("10 seconds")
        )
        const event = Option.getOrThrow(received)
        expect(event.sessionId).toBe(session.id)
        // Both ids of the sender ride along; an echo contact has no LID.
        expect(event.data).toMatchObject({ message: { text: "hello from a library", from: echo }, phone: echo, lid: null })
        const stored = yield* messaging.get(session.id, sent.messageId)
        expect(stored.fromMe).toBe(true)
      })
      yield* Effect.scoped(Effect.provide(program, SwitchboardCore(settings, sandboxEngineLayer(settings))))
    }))
})
