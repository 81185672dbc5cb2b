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

/**
 * A repository operation: `body`'s statements, then `transforms` (e.g. `Effect.asVoid`), their
 * failures reported as above. It makes no span of its own (as `Effect.fn` would): an operation
 * is a statement or a few, each of which @effect/sql traces already, and a span with its stack
 * capture costs more CPU than a statement (~20 µs). The services above carry the spans that name work.
 */
export function storeOperation<Args extends ReadonlyArray<any>, A, E, R>(
  body: (...args: Args) => Effect.Effect<A, E, R>
): (...args: Args) => Effect.Effect<A, Exclude<E, SqlError> | StoreUnavailable, R>
export function storeOperation<Args extends ReadonlyArray<any>, A, E, R, A2, E2, R2>(
  body: (...args: Args) => Effect.Effect<A, E, R>,
  transform: (effect: Effect.Effect<A, E, R>) => Effect.Effect<A2, E2, R2>
): (...args: Args) => Effect.Effect<A2, Exclude<E2, SqlError> | StoreUnavailable, R2>
export function storeOperation<Args extends ReadonlyArray<any>, A, E, R, A2, E2, R2, A3, E3, R3>(
  body: (...args: Args) => Effect.Effect<A, E, R>,
  transform: (effect: Effect.Effect<A, E, R>) => Effect.Effect<A2, E2, R2>,
  transform2: (effect: Effect.Effect<A2, E2, R2>) => Effect.Effect<A3, E3, R3>
): (...args: Args) => Effect.Effect<A3, Exclude<E3, SqlError> | StoreUnavailable, R3>
export function storeOperation(
  body: (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown, unknown>,
  ...transforms: ReadonlyArray<(effect: Effect.Effect<unknown, unknown, unknown>) => Effect.Effect<unknown, unknown, unknown>>
) {
  return (...args: ReadonlyArray<unknown>) => orStoreUnavailable(transforms.reduce((effect, transform) => transform(effect), body(...args)))
}
