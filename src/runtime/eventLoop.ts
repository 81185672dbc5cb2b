import { Effect } from "effect"

/**
 * Goes on once the event loop has run what was waiting (sockets, timers: `setImmediate`).
 * Effect's scheduler gives each fiber its own run of microtasks, so fibers that keep waking each
 * other (thousands of sessions starting, taking turns at the Store) can hold off every HTTP
 * request until they are all done; and work that waits a turn finds the work that came with it
 * (the receipts of one turn, taken together).
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const immediate = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(immediate))
})
