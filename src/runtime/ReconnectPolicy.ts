import { Duration, Effect, type Option, Schedule } from "effect"
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
 * `reset` before any `next` does nothing, as a fresh driver's would. A class: its operations
 * live on the prototype, not in closures and effects made for each of them (two per session).
 */
class DriverWhenNeeded<Out, In, R> {
  private driver: Schedule.ScheduleDriver<Out, In, R> | undefined
  constructor(private readonly schedule: () => Schedule.Schedule<Out, In, R>) {}

  next(input: In): Effect.Effect<Out, Option.Option<never>, R> {
    return Effect.flatMap(
      Effect.suspend(() =>
        this.driver === undefined
          ? Effect.map(Schedule.driver(this.schedule()), (made) => (this.driver = made))
          : Effect.succeed(this.driver)),
      (made) => made.next(input)
    )
  }

  get reset(): Effect.Effect<void> {
    return Effect.suspend(() => (this.driver === undefined ? Effect.void : this.driver.reset))
  }
}

export const driverWhenNeeded = <Out, In, R>(schedule: () => Schedule.Schedule<Out, In, R>) => new DriverWhenNeeded(schedule)
