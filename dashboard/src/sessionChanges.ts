import { useEffect, useRef, useState } from "preact/hooks"
import { subscribeEvents } from "./events"

/** A burst of events (a history batch, a busy chat) is read once, this long after its first. */
const SETTLE_MS = 300

/**
 * Follows the live stream of one session for the given event kinds and calls `onChange` once per
 * burst of them (if given); returns how many bursts there were (a key for what should read again with them).
 */
export const useSessionChanges = (sessionId: string, kinds: ReadonlyArray<string>, onChange?: () => void) => {
  const [changes, setChanges] = useState(0)
  const latest = useRef(onChange)
  latest.current = onChange
  useEffect(() => {
    if (sessionId === "") return undefined
    let timer: number | undefined
    const stop = subscribeEvents({
      sessionId,
      events: kinds,
      onEvent: () => {
        if (timer !== undefined) return
        timer = window.setTimeout(() => {
          timer = undefined
          setChanges((count) => count + 1)
          latest.current?.()
        }, SETTLE_MS)
      }
    })
    return () => {
      window.clearTimeout(timer)
      stop()
    }
  }, [sessionId, kinds.join(",")])
  return changes
}
