import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { StoreUnavailable } from "../../domain/Errors.js"

/** What a repository reports when its SQL fails: the Store is unavailable (never a defect). */
export const orStoreUnavailable = <A, R>(effect: Effect.Effect<A, SqlError, R>): Effect.Effect<A, StoreUnavailable, R> =>
  Effect.mapError(effect, (error) => new StoreUnavailable({ message: `the Store failed: ${error.message}` }))
