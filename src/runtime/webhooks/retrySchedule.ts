import { Duration } from "effect"

/**
 * When a failed delivery is tried again. The wait after the n-th failed attempt is `delays[n-1]`
 * (the last one repeats for webhooks allowed more attempts than there are delays), stretched or
 * shrunk at random by up to `jitter` (a fraction), so that the retries of a receiver that was
 * down do not all arrive in the same second when it comes back.
 */
export interface RetrySchedule {
  readonly delays: ReadonlyArray<Duration.Duration>
  readonly jitter: number
}

/**
 * 10 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, each ±20%: with the default 8 attempts, the last
 * one comes about 17.6 hours after the first (between 14 and 21); a webhook allowed 20 tries
 * every 10 hours after the seventh.
 */
export const defaultRetrySchedule: RetrySchedule = {
  delays: [
    Duration.seconds(10),
    Duration.minutes(1),
    Duration.minutes(5),
    Duration.minutes(30),
    Duration.hours(2),
    Duration.hours(5),
    Duration.hours(10)
  ],
  jitter: 0.2
}

/** The wait after failed attempt number `attempt` (1-based); `random` is uniform in [0, 1). */
export const retryDelay = (schedule: RetrySchedule, attempt: number, random: number): Duration.Duration => {
  const base = schedule.delays[Math.min(attempt, schedule.delays.length) - 1] ?? Duration.zero
  const factor = 1 + schedule.jitter * (2 * random - 1)
  return Duration.millis(Math.max(0, Math.round(Duration.toMillis(base) * factor)))
}
