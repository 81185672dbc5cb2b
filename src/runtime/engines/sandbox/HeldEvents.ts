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
  /** Whether the ledger has its row; one held with `writeLater` has none until `writeDeferred`. */
  readonly written: boolean
}

export type HeldEvents = Effect.Effect.Success<ReturnType<typeof makeHeldEvents>>

export const makeHeldEvents = (ledger: LedgerOperations<never>, remembered: ReadonlyArray<HeldEntry>) =>
  Effect.gen(function*() {
    const bySession = yield* Ref.make(
      remembered.reduce(
        (all, { event, key, seq, sessionId }) =>
          HashMap.set(all, sessionId, HashMap.set(entriesIn(all, sessionId), key, { seq, event, written: true })),
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

    const setEntries = (sessionId: string, entries: HashMap.HashMap<string, Held>) =>
      Ref.update(bySession, HashMap.isEmpty(entries) ? HashMap.remove(sessionId) : HashMap.set(sessionId, entries))

    /**
     * Holds the event for the session; `false` when it was already held (so it needs no second
     * hand-over). With `writeLater` the ledger row waits for `writeDeferred`, and is never
     * written if the consumer takes the event first (see `Switchboard.handTo`).
     */
    const hold = (sessionId: string, event: HeldEvent, options?: { readonly writeLater: boolean }): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const seq = yield* Ref.get(nextSeq)
        const key = keys.get(event) ?? heldKeyOf(event, seq)
        const entries = yield* entriesOf(sessionId)
        if (HashMap.has(entries, key)) return false
        yield* Ref.set(nextSeq, seq + 1)
        keys.set(event, key)
        const written = options?.writeLater !== true
        yield* setEntries(sessionId, HashMap.set(entries, key, { seq, event, written }))
        if (written) yield* ledger.hold(sessionId, key, seq, event)
        return true
      })

    /** The session's consumer took the event; `false` when it was not held (taken before, e.g. from a previous line). */
    const release = (sessionId: string, event: HeldEvent): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const key = keys.get(event)
        const entries = yield* entriesOf(sessionId)
        const entry = key === undefined ? Option.none() : HashMap.get(entries, key)
        if (key === undefined || Option.isNone(entry)) return false
        yield* setEntries(sessionId, HashMap.remove(entries, key))
        if (entry.value.written) yield* ledger.release(sessionId, key)
        return true
      })

    /** Writes the session's events held with `writeLater` that are still held: from now on they must outlive the process. */
    const writeDeferred = (sessionId: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        const entries = yield* entriesOf(sessionId)
        const unwritten = Array.from(entries).filter(([, entry]) => !entry.written).sort(([, a], [, b]) => a.seq - b.seq)
        if (unwritten.length === 0) return
        yield* setEntries(sessionId, unwritten.reduce((all, [key, entry]) => HashMap.set(all, key, { ...entry, written: true }), entries))
        yield* Effect.forEach(unwritten, ([key, { event, seq }]) => ledger.hold(sessionId, key, seq, event), { discard: true })
      })

    /** Everything held for the session, in arrival order. */
    const inOrder = (sessionId: string): Effect.Effect<ReadonlyArray<HeldEvent>> =>
      entriesOf(sessionId).pipe(Effect.map((entries) =>
        Array.from(HashMap.values(entries)).sort((a, b) => a.seq - b.seq).map(({ event }) => event)
      ))

    /** Memory only: the caller drops the session from the ledger together with its other records. */
    const forget = (sessionId: string) => Ref.update(bySession, HashMap.remove(sessionId))

    return { hold, release, writeDeferred, inOrder, forget }
  })

const entriesIn = (all: HashMap.HashMap<string, HashMap.HashMap<string, Held>>, sessionId: string) =>
  Option.getOrElse(HashMap.get(all, sessionId), () => HashMap.empty<string, Held>())
