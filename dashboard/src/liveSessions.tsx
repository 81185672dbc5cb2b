import { useEffect, useRef, useState } from "preact/hooks"
import type { Session, SessionStatus } from "./api"
import { type StreamState, subscribeEvents } from "./events"

/** A session row, with when its status was last told by an event (so an older read does not undo it). */
export type LiveSession = Session & { readonly statusAt?: string }

/** Merges a freshly read session into what is shown, keeping a newer status that came by event. */
export const mergeSession = (known: LiveSession | undefined, fresh: Session): LiveSession =>
  known?.statusAt !== undefined && known.statusAt > fresh.updatedAt ? { ...fresh, status: known.status, statusAt: known.statusAt } : fresh

/**
 * Follows `session.status` (and optionally `session.qr`) events of every session, or of one.
 * `onStatus` gets each change; `onOpen` runs each time the stream (re)opens.
 */
export const useSessionEvents = (options: {
  sessionId?: string
  withQr?: boolean
  onStatus: (sessionId: string, status: SessionStatus, at: string) => void
  onQr?: (sessionId: string) => void
  onOpen?: () => void
}) => {
  const [state, setState] = useState<StreamState>("connecting")
  const latest = useRef(options)
  latest.current = options
  useEffect(
    () =>
      subscribeEvents({
        ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
        events: options.withQr === true ? ["session.status", "session.qr"] : ["session.status"],
        onEvent: (event) => {
          if (event.event === "session.status") {
            const data = event.data as { status?: SessionStatus }
            if (data.status !== undefined) latest.current.onStatus(event.sessionId, data.status, event.timestamp)
          } else if (event.event === "session.qr") {
            latest.current.onQr?.(event.sessionId)
          }
        },
        onOpen: () => latest.current.onOpen?.(),
        onState: setState
      }),
    [options.sessionId, options.withQr]
  )
  return state
}

export const LiveIndicator = ({ state }: { state: StreamState }) => (
  <span class={`live live-${state}`} data-testid="live-status" data-state={state} title="Live status updates (Server-Sent Events)">
    {state === "live" ? "● live" : state === "stopped" ? "○ not live" : "○ connecting…"}
  </span>
)
