import type { StoreUnavailable } from "../domain/Errors.js"
import { Chunk, Context, Effect, Layer, Option, Stream } from "effect"
import { EventRepo } from "../runtime/ports/store/EventRepo.js"
import { Events } from "../runtime/Events.js"
import { type DomainEvent, type EventKind } from "../domain/Events.js"

export interface LiveFilter {
  readonly sessionId?: string | undefined
  readonly kinds?: ReadonlyArray<EventKind> | undefined
}

export interface LiveEventsService {
  /**
   * The events matching `filter` from now on; with `lastEventId`, first every stored event after
   * that one (what a reconnecting client missed), then the live ones, with none twice or lost
   * in between.
   */
  readonly stream: (filter: LiveFilter, lastEventId: Option.Option<string>) => Stream.Stream<DomainEvent, StoreUnavailable>
}

export class LiveEvents extends Context.Tag("switchboard/LiveEvents")<LiveEvents, LiveEventsService>() {
  static readonly layer = Layer.effect(LiveEvents, Effect.suspend(() => make))
}

/** Stored events read per query while catching up. */
const REPLAY_BATCH = 500

const make = Effect.gen(function*() {
  const events = yield* Events
  const outbox = yield* EventRepo

  // A webhook's test event is that webhook's business, not the stream's.
  const matches = (filter: LiveFilter) => (event: DomainEvent) =>
    event.event !== "webhook.test" &&
    (filter.sessionId === undefined || event.sessionId === filter.sessionId) &&
    (filter.kinds === undefined || filter.kinds.length === 0 || filter.kinds.includes(event.event))

  /** Every stored event after `afterId`, batch by batch; ends with the id of the last one. */
  const replay = (filter: LiveFilter, afterId: string) =>
    Stream.paginateChunkEffect(afterId, (cursor) =>
      Effect.map(outbox.after(cursor, filter, REPLAY_BATCH), (batch) => {
        const last = batch.at(-1)
        return [Chunk.fromIterable(batch), last === undefined || batch.length < REPLAY_BATCH ? Option.none() : Option.some(last.id)]
      }))

  const service: LiveEventsService = {
    stream: (filter, lastEventId) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        // Subscribed before reading the Store: nothing published meanwhile can fall in between.
        const live = (yield* events.subscribe).pipe(Stream.filter(matches(filter)))
        if (Option.isNone(lastEventId)) return live
        let newest = lastEventId.value
        const missed = replay(filter, lastEventId.value).pipe(Stream.filter(matches(filter)), Stream.tap((event) => Effect.sync(() => void (newest = event.id))))
        // Ids grow with time: what the replay already gave is not given again live.
        return Stream.concat(missed, Stream.suspend(() => live.pipe(Stream.filter((event) => event.id > newest))))
      })).pipe(Stream.withSpan("LiveEvents.stream"))
  }
  return service
})
