import { ChannelRepo } from "../../runtime/ports/store/ChannelRepo.js"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Layer, Option } from "effect"
import type { Channel, ChannelRole } from "../../domain/Channel.js"
import type { Page, PageRequest } from "../../domain/Pagination.js"
import { listByRootIds } from "./paging.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

interface ChannelRecord {
  readonly id: string
  readonly name: string
  readonly description: string | null
  readonly invite_code: string | null
  readonly subscribers: unknown
  readonly role: ChannelRole
  readonly created_at: string | null
}

const toChannel = (record: ChannelRecord): Channel => ({
  id: record.id,
  name: record.name,
  description: record.description,
  inviteCode: record.invite_code,
  subscribers: record.subscribers === null ? null : Number(record.subscribers),
  role: record.role,
  createdAt: record.created_at
})

/** The channels each session owns or follows. */
export const SqlChannelRepo = Layer.effect(
  ChannelRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const load = (sessionId: string, ids: ReadonlyArray<string>): Effect.Effect<Array<Channel>, SqlError> =>
      Effect.map(
        sql<ChannelRecord>`SELECT * FROM channels WHERE session_id = ${sessionId} AND id IN ${sql.in(ids)}`,
        (records) => records.map(toChannel)
      )

    const upsert = Effect.fnUntraced(
      function*(sessionId: string, channel: Channel) {
        yield* sql`DELETE FROM channels WHERE session_id = ${sessionId} AND id = ${channel.id}`
        yield* sql`INSERT INTO channels ${sql.insert({
          session_id: sessionId,
          id: channel.id,
          name: channel.name,
          description: channel.description,
          invite_code: channel.inviteCode,
          subscribers: channel.subscribers,
          role: channel.role,
          created_at: channel.createdAt,
          updated_at: DateTime.formatIso(yield* DateTime.now)
        })}`
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const remove = storeOperation(
      (sessionId: string, channelId: string) => sql`DELETE FROM channels WHERE session_id = ${sessionId} AND id = ${channelId}`, Effect.asVoid)

    const find = storeOperation(
      (sessionId: string, channelId: string) => Effect.map(load(sessionId, [channelId]), (found) => Option.fromNullable(found[0])))

    const list = Effect.fn("ChannelRepo.list")(
      (sessionId: string, page: Option.Option<PageRequest>): Effect.Effect<Page<Channel>, SqlError> =>
        listByRootIds(sql, {
          table: "channels",
          where: sql`session_id = ${sessionId}`,
          orderBy: sql.literal("name ASC, id ASC"),
          page,
          loadByIds: (ids) => load(sessionId, ids),
          idOf: (channel) => channel.id
        }),
      orStoreUnavailable
    )

    return { upsert, remove, find, list } as const
  })
)
