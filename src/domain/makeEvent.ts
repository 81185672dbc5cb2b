import type { DomainEvent, EventKind } from "./Events.js"
import { uuidv7 } from "./uuidv7.js"

/** A new event, stamped now. Apart from Events.ts, whose schemas the dashboard's type check reads, because ids need node:crypto. */
export const makeEvent = (event: EventKind, sessionId: string, data: unknown, at = new Date()): DomainEvent => ({
  id: uuidv7(at.getTime()),
  event,
  sessionId,
  timestamp: at.toISOString(),
  data
})
