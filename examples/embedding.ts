/**
 * Switchboard embedded in an Effect program, without HTTP: a session on the sandbox engine (no
 * phone needed), ready once it pairs, a text sent, and the echo contact's answer heard as a typed
 * event. The README quotes this file, and the package's smoke test (test/package-smoke.test.ts)
 * runs it against the packed package.
 */
import { Effect, Stream } from "effect"
import { ChatId, Events, Messaging, Sessions, Switchboard } from "switchboard"

const program = Effect.gen(function*() {
  const sessions = yield* Sessions
  const messaging = yield* Messaging
  // Subscribed before sending, so the answer cannot be missed; `event.data` is typed by kind.
  const received = yield* Events.ofKind("message.received")
  const session = yield* sessions.create({ name: "bot", autoStart: true })
  yield* sessions.awaitStatus(session.id, (status) => status === "ready", "30 seconds")
  // ChatId.make takes what people type and normalises it (here to 15550007777@c.us).
  const sent = yield* messaging.sendText(session.id, { chatId: ChatId.make("+1 555 000 7777"), text: "hi" })
  console.log(`session ${session.name} sent message ${sent.messageId}`)
  // The sandbox's 1555000xxxx numbers are echo contacts: they answer what they are sent.
  const answer = yield* received.pipe(Stream.runHead, Effect.timeout("10 seconds"))
  if (answer._tag === "Some") console.log(`${answer.value.data.message.from} answered: ${answer.value.data.message.text}`)
})

// `dataDir` holds the SQLite file and the media. Closing the scope drains: queued sends go out
// (within `shutdownTimeout`) before the store closes.
await Effect.runPromise(Effect.scoped(Effect.provide(program, Switchboard.layer({ dataDir: "./data", engine: "sandbox" }))))
