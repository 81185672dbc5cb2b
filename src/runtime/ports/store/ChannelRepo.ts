import { Context, type Effect, type Option } from "effect"
import type { Channel } from "../../../domain/Channel.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"



/** The channels each session owns or follows. */
export class ChannelRepo extends Context.Tag("switchboard/ChannelRepo")<ChannelRepo, {
  readonly upsert: (sessionId: string, channel: Channel) => Effect.Effect<void, StoreUnavailable>
  readonly remove: (sessionId: string, channelId: string) => Effect.Effect<void, StoreUnavailable>
  readonly find: (sessionId: string, channelId: string) => Effect.Effect<Option.Option<Channel>, StoreUnavailable>
  readonly list: (sessionId: string, page: Option.Option<PageRequest>) => Effect.Effect<Page<Channel>, StoreUnavailable>
}>() {}
