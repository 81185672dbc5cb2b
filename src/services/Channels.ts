import type { StoreUnavailable } from "../domain/Errors.js"
import { Context, Effect, Layer, Option } from "effect"
import { ChannelRepo } from "../runtime/ports/store/ChannelRepo.js"
import { engineCall } from "../runtime/EngineCall.js"
import type { Channel, ChannelMessage, SubscribeRequest } from "../domain/Channel.js"
import type { EngineCallError, EngineTimeout } from "../domain/Errors.js"
import { NotFound } from "../domain/Errors.js"
import type { Page, PageRequest } from "../domain/Pagination.js"
import { makeSessionCalls } from "./SessionCalls.js"

type Failure = EngineCallError | EngineTimeout

export interface ChannelsService {
  readonly create: (sessionId: string, name: string, description: string | null) => Effect.Effect<Channel, Failure | StoreUnavailable>
  /** The channels the session owns or follows, as the Store keeps them. */
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Channel>, NotFound | StoreUnavailable>
  readonly get: (sessionId: string, channelId: string) => Effect.Effect<Channel, Failure | StoreUnavailable>
  /** Deletes a channel the session owns; unfollows one it follows. */
  readonly remove: (sessionId: string, channelId: string) => Effect.Effect<void, Failure | StoreUnavailable>
  readonly subscribe: (sessionId: string, target: SubscribeRequest) => Effect.Effect<Channel, Failure | StoreUnavailable>
  /** The newest `count` posts, newest first. */
  readonly messages: (sessionId: string, channelId: string, count: number) => Effect.Effect<ReadonlyArray<ChannelMessage>, Failure | StoreUnavailable>
}

export class Channels extends Context.Tag("switchboard/Channels")<Channels, ChannelsService>() {
  static readonly layer = Layer.effect(Channels, Effect.suspend(() => make))
}

const make = Effect.gen(function*() {
  const repo = yield* ChannelRepo
  const { call, exists, isReady } = yield* makeSessionCalls
  const keep = (sessionId: string) => (channel: Channel) => repo.upsert(sessionId, channel)

  const service: ChannelsService = {
    create: Effect.fn("Channels.create")((sessionId, name, description) =>
      call(sessionId, engineCall("ChannelsCreate", { name, description })).pipe(Effect.tap(keep(sessionId)))),
    list: Effect.fn("Channels.list")((sessionId, page) => Effect.zipRight(exists(sessionId), repo.list(sessionId, page))),
    get: Effect.fn("Channels.get")(function*(sessionId, channelId) {
      if (yield* isReady(sessionId)) {
        const channel = yield* call(sessionId, engineCall("ChannelsGet", { channelId }))
        // Only channels the session owns or follows are kept; a looked-up one is not.
        if (channel.role !== "guest") yield* repo.upsert(sessionId, channel)
        return channel
      }
      return yield* Effect.flatMap(repo.find(sessionId, channelId), Option.match({
        onNone: () => Effect.fail(new NotFound({ code: "CHANNEL_NOT_FOUND", message: `Channel ${channelId} is not known to this session` })),
        onSome: Effect.succeed
      }))
    }),
    remove: Effect.fn("Channels.remove")(function*(sessionId, channelId) {
      const channel = yield* call(sessionId, engineCall("ChannelsGet", { channelId }))
      yield* call(sessionId, channel.role === "owner" ? engineCall("ChannelsDelete", { channelId }) : engineCall("ChannelsUnsubscribe", { channelId }))
      yield* repo.remove(sessionId, channelId)
    }),
    subscribe: Effect.fn("Channels.subscribe")((sessionId, target) =>
      call(sessionId, engineCall("ChannelsSubscribe", { target })).pipe(Effect.tap(keep(sessionId)))),
    messages: Effect.fn("Channels.messages")((sessionId, channelId, count) => call(sessionId, engineCall("ChannelsMessages", { channelId, count })))
  }
  return service
})
