import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { RepositoriesLive, storeLayerFromUrl } from "../src/layers/store/index.js"
import { MessageRepo, type MessageRow } from "../src/runtime/ports/store/MessageRepo.js"
import { SessionRepo } from "../src/runtime/ports/store/SessionRepo.js"
import { messageRow, sessionRow } from "./support/fixtures.js"
import { storeBackends } from "./support/storeBackends.js"

/**
 * `MessageRepo.insertAll` (issue 19: a group commit's accepted sends in one statement each for
 * the rows and their history, the account's own messages to one chat folded into one chat
 * write) must leave the Store as inserting the rows one by one does: the same messages, the
 * same history, the same chat list, unread counts and last messages included.
 */
const session = sessionRow()
const at = (second: number) => `2024-02-01T00:00:${String(second).padStart(2, "0")}.000Z`

/** Own and received messages in three chats, out of time order, with ties and history among them. */
const rows: ReadonlyArray<MessageRow> = [
  ["a", "111@c.us", true, 5, "live"],
  ["b", "111@c.us", true, 3, "live"], // older than a: a stays the chat's last message
  ["c", "111@c.us", true, 5, "live"], // ties with a: the later one wins
  ["d", "222@c.us", false, 1, "live"], // a received message counts as unread
  ["e", "222@c.us", true, 2, "live"], // the account writing reads the chat
  ["f", "222@c.us", false, 4, "live"], // and a later one counts again
  ["g", "333@c.us", true, 9, "history"],
  ["h", "333@c.us", false, 8, "history"],
  ["i", "444@c.us", true, 7, "live"],
  ["j", "444@c.us", true, 6, "live"] // older, but the chat is updated as of its write
].map(([id, chatId, fromMe, second, source]) =>
  messageRow(session.id, `${id}`, {
    chatId: chatId as string,
    fromMe: fromMe as boolean,
    source: source as MessageRow["source"],
    timestamp: at(second as number),
    createdAt: at(second as number),
    updatedAt: at(10 + "abcdefghij".indexOf(id as string))
  })
)

/** What a reader of the Store sees of the rows: messages, history and chats, in a stable order. */
const contents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    messages: yield* sql`SELECT id, chat_id, from_me, status, timestamp FROM messages ORDER BY id`,
    history: yield* sql`SELECT message_id, status, at FROM message_status_history ORDER BY message_id`,
    chats: yield* sql`SELECT * FROM chats ORDER BY id`
  }
})

const storedWith = (url: string, insert: (repo: MessageRepo["Type"]) => Effect.Effect<void, unknown>) =>
  Effect.gen(function*() {
    yield* (yield* SessionRepo).insert(session)
    yield* insert(yield* MessageRepo)
    return yield* contents
  }).pipe(Effect.provide(RepositoriesLive.pipe(Layer.provideMerge(storeLayerFromUrl(url)))), Effect.scoped)

for (const backend of storeBackends("message-insert-all.test.ts")) {
  describe.skipIf(backend.skip)(`MessageRepo.insertAll on ${backend.name}`, () => {
    it("stores rows together as one by one: messages, history and the chat list alike", async () => {
      const together = await Effect.runPromise(Effect.flatMap(backend.freshUrl, (url) => storedWith(url, (repo) => repo.insertAll(rows))))
      const oneByOne = await Effect.runPromise(Effect.flatMap(backend.freshUrl, (url) =>
        storedWith(url, (repo) => Effect.forEach(rows, repo.insert, { discard: true }))))
      expect(together.messages).toHaveLength(rows.length)
      expect(together.chats).toHaveLength(4)
      expect(together).toEqual(oneByOne)
    })
  })
}
