import { Duration, Effect, Schedule } from "effect"
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

/**
 * A `Schedule.driver` made the first time it is needed: a session's reconnect backoff and its
 * actor's restart backoff are needed only after a failure, and making them up front (the
 * schedule's combinators, the driver and its state) is work and memory for every session.
 * `reset` before any `next` does nothing, as a fresh driver's would.
 */
export const driverWhenNeeded = <Out, In, R>(schedule: () => Schedule.Schedule<Out, In, R>) => {
  let driver: Schedule.ScheduleDriver<Out, In, R> | undefined
  const made = Effect.suspend(() =>
    driver === undefined ? Effect.map(Schedule.driver(schedule()), (made) => (driver = made)) : Effect.succeed(driver))
  return {
    next: (input: In) => Effect.flatMap(made, (made) => made.next(input)),
    reset: Effect.suspend(() => (driver === undefined ? Effect.void : driver.reset))
  }
}
