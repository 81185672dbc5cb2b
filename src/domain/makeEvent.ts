import type { DomainEventOf, EventData, EventKind } from "./Events.js"
import { uuidv7 } from "./uuidv7.js"

/**
 * A new event, stamped now; `data` is what the catalog (`EventData`) says the kind carries.
 * Apart from Events.ts, whose schemas the dashboard's type check reads, because ids need node:crypto.
 */
export const makeEvent = <K extends EventKind>(event: K, sessionId: string, data: EventData[K], at = new Date()): DomainEventOf<K> =>
  // The envelope of `K` is this object; TypeScript cannot see it through the distributive type.
  ({ id: uuidv7(at.getTime()), event, sessionId, timestamp: at.toISOString(), data }) as DomainEventOf<K>
