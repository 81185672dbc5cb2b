import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { StoreUnavailable } from "../../domain/Errors.js"

const unavailable = (error: SqlError) => new StoreUnavailable({ message: `the Store failed: ${error.message}` })

/**
 * What a repository reports when its SQL fails: the Store is unavailable (never a defect).
 * @effect/sql itself dies when a transaction cannot commit or roll back (a connection lost
 * mid-transaction): that defect is the same outage, and reported the same way.
 */
export const orStoreUnavailable = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError> | StoreUnavailable, R> =>
  effect.pipe(
    Effect.catchIf((error): error is Extract<E, SqlError> => error instanceof SqlError, (error) => Effect.fail(unavailable(error))),
    Effect.catchSomeDefect((defect) => defect instanceof SqlError ? Option.some(Effect.fail(unavailable(defect))) : Option.none())
  ) as Effect.Effect<A, Exclude<E, SqlError> | StoreUnavailable, R>
