import { Context, type Effect } from "effect"
import type { StoreUnavailable } from "../../../domain/Errors.js"

/** Runs an effect in one Store transaction; one that cannot begin or commit fails with `StoreUnavailable`. */
export type Transactionally = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreUnavailable, R>

/**
 * The Store as a whole, beside its repositories: transactions that span them, what must wait
 * for a transaction's commit, and whether the Store answers.
 */
export class Store extends Context.Tag("switchboard/Store")<Store, {
  /**
   * Runs an effect in one transaction (nested ones become savepoints). Used to write a change
   * and the events announcing it together: the outbox never holds an event for a change that
   * did not happen, nor misses one for a change that did.
   */
  readonly transactionally: Transactionally
  /**
   * Runs `effect` once the transaction this fiber is in has committed (at once outside one),
   * and never if it rolls back: what others may see of a change (the live event feed) waits
   * until the change is there to see.
   */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
  /** Whether the Store answers (health checks). */
  readonly ping: Effect.Effect<void, StoreUnavailable>
}>() {}
