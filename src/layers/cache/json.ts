import { Effect, Option } from "effect"

/** A cache value as JSON text; what has no JSON form (undefined, a function, a cycle, a bigint) is a defect. */
export const toJson = (value: unknown): Effect.Effect<string> =>
  Effect.suspend(() => {
    const json = JSON.stringify(value) as string | undefined
    return json === undefined ? Effect.die(new TypeError("cache values must be JSON")) : Effect.succeed(json)
  })

/** The value of JSON text the cache gave back; None for text that does not parse (not written by us). */
export const fromJson = <A>(text: string): Option.Option<A> => {
  try {
    return Option.some(JSON.parse(text) as A)
  } catch {
    return Option.none()
  }
}
