import { Duration, Schedule } from "effect"
import type { ReconnectSettings } from "../domain/Settings.js"


/**
 * Exponential backoff, capped, with jitter drawn below the cap so that many sessions dropped
 * at once (a network blip) do not reconnect in lockstep. Ends after `maxAttempts` recurrences.
 */
export const reconnectSchedule = (settings: ReconnectSettings) =>
  Schedule.exponential(settings.initialDelay, 2).pipe(
    Schedule.modifyDelay((_, delay) => Duration.min(delay, settings.maxDelay)),
    Schedule.jitteredWith({ min: 0.5, max: 1 }),
    Schedule.intersect(Schedule.recurs(settings.maxAttempts))
  )

/**
 * How the supervisor restarts an actor that crashed: quickly at first, at most once a minute.
 * (The supervisor starts over with quick restarts after an actor ran well for a while.)
 */
export const actorRestartSchedule = Schedule.exponential("500 millis", 2).pipe(
  Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.minutes(1))),
  Schedule.jittered
)
