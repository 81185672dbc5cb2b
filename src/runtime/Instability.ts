import { Duration } from "effect"
import type { DomainEventOf } from "../domain/Events.js"
import { makeEvent } from "../domain/makeEvent.js"
import type { LastError } from "../domain/Session.js"

/**
 * A session that keeps losing its connection (issue 21, point 5): one that reconnects more than
 * `UNSTABLE_RECONNECTS` times within `UNSTABLE_WINDOW` is unstable. Each reconnect alone looks
 * like a blip (disconnected, ready again a second later); the count is what tells an operator
 * that the network, the proxy or the account is in trouble.
 */
export const UNSTABLE_RECONNECTS = 5
export const UNSTABLE_WINDOW = Duration.minutes(10)

/** What a disconnect tells about the session's stability. */
export interface Stability {
  /** Reconnects within the window, this one included. */
  readonly reconnects: number
  /** More than `UNSTABLE_RECONNECTS` of them. */
  readonly unstable: boolean
  /** This reconnect made it unstable: `session.unstable` is announced once per crossing. */
  readonly crossed: boolean
}

/**
 * The reconnects of one session in the last `UNSTABLE_WINDOW` (a sliding window). Made at a
 * session's first reconnect: most sessions never need one.
 */
export class ReconnectWindow {
  private readonly times: Array<number> = []
  private announced = false
  private readonly windowMs = Duration.toMillis(UNSTABLE_WINDOW)

  /** Counts a reconnect at `now` (ms); the ones older than the window are forgotten. */
  record(now: number): Stability {
    while (this.times.length > 0 && now - this.times[0]! >= this.windowMs) this.times.shift()
    this.times.push(now)
    const reconnects = this.times.length
    const unstable = reconnects > UNSTABLE_RECONNECTS
    const crossed = unstable && !this.announced
    // Back at or under the threshold, the next crossing is news again.
    this.announced = unstable
    return { reconnects, unstable, crossed }
  }
}

/**
 * The `lastError` of an unstable session, for as long as it stays unstable: the count, and the
 * cause of the latest disconnect, which it would otherwise have shown.
 */
export const unstableError = (reconnects: number, cause: Omit<LastError, "at">): Omit<LastError, "at"> => ({
  code: "UNSTABLE",
  message: `reconnected ${reconnects} times in the last ${Duration.toMinutes(UNSTABLE_WINDOW)} minutes (more than ${UNSTABLE_RECONNECTS} is unstable); ` +
    `latest: ${cause.code}: ${cause.message}`
})

/**
 * A disconnect on its way to a reconnect: the code of its cause (the `session.status` event's
 * reason, also when `lastError` says UNSTABLE), and what it tells about the session's stability.
 */
export interface Disconnect {
  readonly cause: string
  readonly stability: Stability
}

/** `session.unstable`, when this disconnect made the session unstable; nothing otherwise. */
export const announcedInstability = (
  sessionId: string,
  disconnect: Disconnect | undefined,
  at: Date
): ReadonlyArray<DomainEventOf<"session.unstable">> =>
  disconnect?.stability.crossed === true
    ? [makeEvent("session.unstable", sessionId, {
      reconnects: disconnect.stability.reconnects,
      window: Duration.toSeconds(UNSTABLE_WINDOW),
      reason: disconnect.cause
    }, at)]
    : []
