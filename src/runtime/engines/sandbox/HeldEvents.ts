import { Effect, HashMap, Option, Ref } from "effect"
import { type HeldEntry, type HeldEvent, heldKeyOf, type LedgerOperations } from "./Ledger.js"

/**
 * The events the network holds for each session until that session's consumer has taken them
 * from its connection's stream: the switchboard's working copy, written through to the ledger
 * one event at a time. Like the rest of the switchboard this runs under its lock (the caller
 * takes it), so a read followed by a write here cannot interleave with another.
 */

interface Held {
  readonly seq: number
  readonly event: HeldEvent
}

export type HeldEvents = Effect.Effect.Success<ReturnType<typeof makeHeldEvents>>

export const makeHeldEvents = (ledger: LedgerOperations<never>, remembered: ReadonlyArray<HeldEntry>) =>
  Effect.gen(function*() {
    const bySession = yield* Ref.make(
      remembered.reduce(
        (all, { event, key, seq, sessionId }) =>
          HashMap.set(all, sessionId, HashMap.set(entriesIn(all, sessionId), key, { seq, event })),
        HashMap.empty<string, HashMap.HashMap<string, Held>>()
      )
    )
    // Arrival order must survive a restart, so numbering continues after the highest stored seq.
    const nextSeq = yield* Ref.make(remembered.reduce((next, { seq }) => Math.max(next, seq + 1), 0))
    // The key each held event object was given. What a consumer pulls is always an object that
    // was held (handed over as held, or offered again from here), so releasing finds the key even
    // for a group or label change, whose key came from its arrival and not its content. One
    // change handed to several sessions keeps the key of its first hold (unique in each session).
    const keys = new WeakMap<HeldEvent, string>()
    for (const { event, key } of remembered) keys.set(event, key)

    const entriesOf = (sessionId: string) => Ref.get(bySession).pipe(Effect.map((all) => entriesIn(all, sessionId)))

    /** Holds the event for the session; `false` when it was already held (so it needs no second hand-over). */
    const hold = (sessionId: string, event: HeldEvent): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const seq = yield* Ref.get(nextSeq)
        const key = keys.get(event) ?? heldKeyOf(event, seq)
        const entries = yield* entriesOf(sessionId)
        if (HashMap.has(entries, key)) return false
        yield* Ref.set(nextSeq, seq + 1)
        keys.set(event, key)
        yield* Ref.set(bySession, HashMap.set(yield* Ref.get(bySession), sessionId, HashMap.set(entries, key, { seq, event })))
        yield* ledger.hold(sessionId, key, seq, event)
        return true
      })

    /** The session's consumer took the event; `false` when it was not held (taken before, e.g. from a previous line). */
    const release = (sessionId: string, event: HeldEvent): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const key = keys.get(event)
        const entries = yield* entriesOf(sessionId)
        if (key === undefined || !HashMap.has(entries, key)) return false
        const rest = HashMap.remove(entries, key)
        yield* Ref.update(bySession, HashMap.isEmpty(rest) ? HashMap.remove(sessionId) : HashMap.set(sessionId, rest))
        yield* ledger.release(sessionId, key)
        return true
      })

    /** Everything held for the session, in arrival order. */
    const inOrder = (sessionId: string): Effect.Effect<ReadonlyArray<HeldEvent>> =>
      entriesOf(sessionId).pipe(Effect.map((entries) =>
        Array.from(HashMap.values(entries)).sort((a, b) => a.seq - b.seq).map(({ event }) => event)
      ))

    /** Memory only: the caller drops the session from the ledger together with its other records. */
    const forget = (sessionId: string) => Ref.update(bySession, HashMap.remove(sessionId))

    return { hold, release, inOrder, forget }
  })

const entriesIn = (all: HashMap.HashMap<string, HashMap.HashMap<string, Held>>, sessionId: string) =>
  Option.getOrElse(HashMap.get(all, sessionId), () => HashMap.empty<string, Held>())
