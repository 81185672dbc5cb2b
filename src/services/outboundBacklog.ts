import { Clock, Context, Effect, Layer, Option } from "effect"
import { RateLimited, type StoreUnavailable, ValidationFailed } from "../domain/Errors.js"
import type { OutboundBacklog as OutboundBacklogView } from "../domain/Session.js"
import { AppSettings } from "../domain/Settings.js"
import { MessageRepo } from "../runtime/ports/store/MessageRepo.js"
import { SessionSupervisor } from "../runtime/SessionSupervisor.js"

export interface OutboundBacklogService {
  /** The session's accepted sends that have not gone out yet, and the bound (null: none). */
  readonly view: (sessionId: string) => Effect.Effect<OutboundBacklogView, StoreUnavailable>
  /**
   * Lets one more send in, or refuses it with 429 SESSION_BACKLOG_FULL (its
   * `details.retryAfterSeconds` becomes the answer's Retry-After) when the backlog is at
   * OUTBOUND_BACKLOG_MAX. Called before anything is stored, so a refused send leaves no trace.
   */
  readonly admit: (sessionId: string) => Effect.Effect<void, RateLimited | StoreUnavailable>
  /** The same for a batch, let in whole or not at all; one larger than the bound could never fit: 400 BATCH_TOO_LARGE. */
  readonly admitBatch: (sessionId: string, size: number) => Effect.Effect<void, RateLimited | ValidationFailed | StoreUnavailable>
}

/**
 * The bound on each session's outbound backlog (issue 19). Accepting is much cheaper than
 * sending (and pacing makes sending slower still on purpose), so without a bound a client can
 * pile up sends that go out hours later; the bound makes it wait instead, told for how long.
 * The check reads the count without reserving room: requests checked at the same moment may
 * pass the bound by their number, which is as many as the clients' concurrent connections.
 */
export class OutboundBacklog extends Context.Tag("switchboard/OutboundBacklog")<OutboundBacklog, OutboundBacklogService>() {
  static readonly layer = Layer.effect(OutboundBacklog, Effect.suspend(() => make))
}

/** With pacing off, the send rate assumed until one is measured (about what a lane does on Postgres). */
const ASSUMED_UNPACED_SENDS_PER_SECOND = 50
/** With pacing off, a wait estimated past this says little (the lane may be stalled): the client looks again then. */
const UNPACED_RETRY_CEILING_SECONDS = 60
/** Samples of the backlog closer together than this are too noisy to measure a rate from. */
const MIN_SAMPLE_MILLIS = 200

/**
 * How long until `wanted` more sends fit: the sends that must go out first (the backlog plus the
 * wanted ones, less the bound), at the session's pace. At least 1 s, as Retry-After counts whole
 * seconds.
 */
export const retryAfterSeconds = (
  { backlog, ceiling = Infinity, max, secondsPerSend, wanted }: {
    readonly backlog: number
    readonly max: number
    readonly wanted: number
    readonly secondsPerSend: number
    readonly ceiling?: number
  }
) => Math.max(1, Math.min(ceiling, Math.ceil((backlog + wanted - max) * secondsPerSend)))

interface Sample {
  readonly backlog: number
  readonly at: number
  /** Sends let in since the sample was taken: they went into the backlog too. */
  admitted: number
  /** Sends per second the lane was seen to send at, if measured yet. */
  readonly rate: number | undefined
}

/**
 * The rate a session's lane sends at, from the backlog seen at each admission: what went out
 * between two looks is the first backlog plus what was let in, less the second backlog. Only
 * a window in which the lane had work throughout counts (one that started or ended empty shows
 * the lane idle part of the time, not its speed); each new window weighs half.
 */
export const makeDrainMeter = () => {
  const samples = new Map<string, Sample>()
  return {
    observe: (sessionId: string, backlog: number, now: number): number | undefined => {
      const last = samples.get(sessionId)
      if (last !== undefined && now - last.at < MIN_SAMPLE_MILLIS) return last.rate
      let rate = last?.rate
      if (last !== undefined && last.backlog > 0 && backlog > 0) {
        const drained = Math.max(0, last.backlog + last.admitted - backlog)
        const measured = drained / ((now - last.at) / 1000)
        rate = rate === undefined ? measured : (rate + measured) / 2
      }
      samples.set(sessionId, { backlog, at: now, admitted: 0, rate })
      return rate
    },
    admitted: (sessionId: string, count: number) => {
      const sample = samples.get(sessionId)
      if (sample !== undefined) sample.admitted += count
    }
  }
}

const make = Effect.gen(function*() {
  const supervisor = yield* SessionSupervisor
  const messages = yield* MessageRepo
  const { outboundBacklogMax: max, pacing } = yield* AppSettings
  const meter = makeDrainMeter()

  /**
   * Counted by the session's lane; the Store's count when its actor does not run here (still
   * restoring, or its runner unreachable). `fresh`: not from a cluster runner's recent figure.
   */
  const count = (sessionId: string, fresh = false) =>
    Effect.flatMap(supervisor.backlog(sessionId, { fresh }), Option.match({
      onSome: Effect.succeed,
      onNone: () => messages.countUnsent([sessionId])
    }))

  /**
   * With pacing on, a send goes out every 60/SEND_RATE_PER_MINUTE s at best (the jitter only
   * slows it). With pacing off, at the rate the lane was measured at (an assumed one until
   * then), and no more than a minute: a lane that is not sending (session reconnecting) gives
   * no estimate worth waiting longer for.
   */
  const pace = (rate: number | undefined) =>
    pacing.sendsPerMinute > 0
      ? { secondsPerSend: 60 / pacing.sendsPerMinute }
      : { secondsPerSend: 1 / (rate ?? ASSUMED_UNPACED_SENDS_PER_SECOND), ceiling: UNPACED_RETRY_CEILING_SECONDS }

  const admit = (sessionId: string, wanted: number) =>
    Effect.gen(function*() {
      const recent = yield* count(sessionId)
      // A refusal is worth an exact count: a recent figure may be behind sends that went out.
      const backlog = recent + wanted <= max ? recent : yield* count(sessionId, true)
      const rate = meter.observe(sessionId, backlog, yield* Clock.currentTimeMillis)
      if (backlog + wanted <= max) return meter.admitted(sessionId, wanted)
      const retryAfter = retryAfterSeconds({ backlog, max, wanted, ...pace(rate) })
      return yield* new RateLimited({
        code: "SESSION_BACKLOG_FULL",
        message: `the session has ${backlog} sends waiting to go out (OUTBOUND_BACKLOG_MAX ${max}); try again in ${retryAfter} s`,
        details: { backlog, max, retryAfterSeconds: retryAfter }
      })
    })

  const tooLarge = (size: number) =>
    new ValidationFailed({
      code: "BATCH_TOO_LARGE",
      message: `${size} messages can never fit in a session's outbound backlog (OUTBOUND_BACKLOG_MAX ${max}); send fewer at a time`
    })

  // 0: no bound, and nothing to count.
  const unbounded = max === 0
  return OutboundBacklog.of({
    view: (sessionId) => Effect.map(count(sessionId, true), (backlog) => ({ backlog, max: unbounded ? null : max })),
    admit: (sessionId) => unbounded ? Effect.void : admit(sessionId, 1),
    admitBatch: (sessionId, size) => unbounded ? Effect.void : size > max ? Effect.fail(tooLarge(size)) : admit(sessionId, size)
  })
})
