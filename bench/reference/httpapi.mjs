// Reference servers 2 and 3: what Effect's HttpApi costs for the gateway's send-text endpoint
// with nothing else (REFERENCE_STORE unset), and the same plus one durable INSERT per request
// through @effect/sql (REFERENCE_STORE=sqlite:<file>, WAL and synchronous=NORMAL like the
// gateway's SqliteStore; or REFERENCE_STORE=postgres://…, through @effect/sql-pg).
//
// The endpoint is the gateway's: POST /api/sessions/:sessionId/messages/send-text, body
// {chatId, text} decoded through Schema, 201 {messageId, chatId, status, timestamp} encoded
// through Schema, served by @effect/platform-node. No auth, no logging middleware, no session.
// Run by the benchmarks as a process of its own; prints `Listening on http://127.0.0.1:<port>`.
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Console, DateTime, Effect, Layer, Redacted, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"

const SendTextRequest = Schema.Struct({ chatId: Schema.String, text: Schema.String })
const SendResult = Schema.Struct({
  messageId: Schema.String,
  chatId: Schema.String,
  status: Schema.Literal("pending"),
  timestamp: Schema.DateTimeUtc
})

const ReferenceApi = HttpApi.make("reference").add(
  HttpApiGroup.make("messages").add(
    HttpApiEndpoint.post("sendText", "/sessions/:sessionId/messages/send-text")
      .setPath(Schema.Struct({ sessionId: Schema.String }))
      .setPayload(SendTextRequest)
      .addSuccess(SendResult, { status: 201 })
  )
).prefix("/api")

const store = process.env.REFERENCE_STORE ?? ""

/** The one table, a subset of the gateway's `messages` row; TEXT timestamps like the gateway's. */
const createTable = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  chat_id TEXT NOT NULL,
  body TEXT,
  status TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  created_at TEXT NOT NULL
)`)

const SqlLive = store.startsWith("sqlite:")
  ? Layer.provideMerge(
    // The gateway's pragmas (the client itself turns WAL on).
    Layer.effectDiscard(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`PRAGMA synchronous = NORMAL`
      yield* sql`PRAGMA busy_timeout = 5000`
      yield* createTable
    })),
    SqliteClient.layer({ filename: store.slice("sqlite:".length) })
  )
  : store.startsWith("postgres:")
  ? Layer.provideMerge(Layer.effectDiscard(createTable), PgClient.layer({ url: Redacted.make(store) }))
  : undefined

/** Stores the message when there is a store: the one write per request the reference pays for. */
const record = SqlLive === undefined
  ? (_row) => Effect.void
  : (row) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO messages ${sql.insert(row)}`)

const MessagesLive = HttpApiBuilder.group(ReferenceApi, "messages", (handlers) =>
  handlers.handle("sendText", ({ path, payload }) =>
    Effect.gen(function*() {
      const now = yield* DateTime.now
      const messageId = randomUUID()
      const at = DateTime.formatIso(now)
      yield* record({ id: messageId, session_id: path.sessionId, chat_id: payload.chatId, body: payload.text, status: "pending", timestamp: at, created_at: at })
      return { messageId, chatId: payload.chatId, status: "pending", timestamp: now }
    }).pipe(Effect.orDie)))

/** Printed once bound: the benchmark learns the port from this line. */
const PrintAddress = Layer.effectDiscard(HttpServer.addressFormattedWith((address) => Console.log(`Listening on ${address}`)))

const ServerLive = Layer.mergeAll(HttpApiBuilder.serve(), PrintAddress).pipe(
  Layer.provide(HttpApiBuilder.api(ReferenceApi).pipe(Layer.provide(MessagesLive))),
  Layer.provide(SqlLive ?? Layer.empty),
  Layer.provide(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

NodeRuntime.runMain(Layer.launch(ServerLive))
