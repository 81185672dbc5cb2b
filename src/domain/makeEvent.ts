import type { DomainEventOf, EventData, EventKind } from "./Events.js"
import { uuidv7 } from "./uuidv7.js"

/**
 * One kind's arguments: its name, the session, the data the catalog (`EventData`) gives that
 * kind, and when. A union of one tuple per kind, so that a name and data of two different
 * kinds never fit together, even when the kind's type is itself a union.
 */
type EventArguments = { readonly [K in EventKind]: [event: K, sessionId: string, data: EventData[K], at?: Date] }[EventKind]

/**
 * A new event, stamped now; `data` is what the catalog (`EventData`) says the kind carries.
 * Apart from Events.ts, whose schemas the dashboard's type check reads, because ids need node:crypto.
 */
export const makeEvent = <K extends EventKind>(...[event, sessionId, data, at = new Date()]: Extract<EventArguments, [K, ...Array<unknown>]>): DomainEventOf<K> =>
  // The envelope of `K` is this object; TypeScript cannot see it through the distributive type.
  ({ id: uuidv7(at.getTime()), event, sessionId, timestamp: at.toISOString(), data }) as DomainEventOf<K>
