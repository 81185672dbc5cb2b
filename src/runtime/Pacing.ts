import { Duration, Effect, Random } from "effect"

export interface PacingSettings {
  /** Sends per minute and session; 0 switches pacing off. */
  readonly sendsPerMinute: number
}

/** Jitter only ever slows down: a session never sends faster than its rate. */
const JITTER_MAX = 1.3

/**
 * The pause after a message went out. Bursts of sends from a fresh number are what gets
 * accounts banned; spacing them at a human-ish rate, irregularly, is what the gateway does
 * for the caller, who only queues.
 */
export const pauseAfterSend = (pacing: PacingSettings): Effect.Effect<void> =>
  pacing.sendsPerMinute <= 0
    ? Effect.void
    : Effect.flatMap(Random.nextRange(1, JITTER_MAX), (factor) =>
      Effect.sleep(Duration.millis((60_000 / pacing.sendsPerMinute) * factor)))
