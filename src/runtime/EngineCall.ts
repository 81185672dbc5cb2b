import { Effect, Schema } from "effect"
import { type EngineConnection, EngineError } from "./Engine.js"

/**
 * An engine operation named as data rather than as a closure, so that it can travel to the
 * process holding the session's connection (in a cluster, another runner): `groups.get` with
 * `[groupId]` runs `connection.groups.get(groupId)` there. The operation's name and its
 * arguments are checked against `EngineConnection` at compile time by `engineCall`.
 */
type Namespace = "groups" | "channels" | "labels" | "contacts"
type Direct = "requestPairingCode" | "markRead" | "react"

type NamespaceOperations<N extends Namespace> = {
  readonly [M in keyof EngineConnection[N] & string as `${N}.${M}`]: EngineConnection[N][M]
}
type Operations =
  & NamespaceOperations<"groups">
  & NamespaceOperations<"channels">
  & NamespaceOperations<"labels">
  & NamespaceOperations<"contacts">
  & { readonly [D in Direct]: EngineConnection[D] }

export type EngineOperation = keyof Operations & string

type ArgumentsOf<Op extends EngineOperation> = Operations[Op] extends (...args: infer A) => unknown ? A : []
type ResultOf<Op extends EngineOperation> = Operations[Op] extends (...args: ReadonlyArray<never>) => Effect.Effect<infer A, unknown>
  ? A
  : Operations[Op] extends Effect.Effect<infer A, unknown> ? A
  : never

/** The wire form of an engine call; `A` is what the operation answers (only the types know it). */
export const EngineCallSchema = Schema.Struct({
  operation: Schema.String,
  args: Schema.Array(Schema.Unknown)
})
export interface EngineCall<A = unknown> extends Schema.Schema.Type<typeof EngineCallSchema> {
  readonly _A?: (_: never) => A
}

export const engineCall = <Op extends EngineOperation>(operation: Op, ...args: ArgumentsOf<Op>): EngineCall<ResultOf<Op>> => ({
  operation,
  args
})

const namespaces: ReadonlySet<string> = new Set<Namespace>(["groups", "channels", "labels", "contacts"])
const directs: ReadonlySet<string> = new Set<Direct>(["requestPairingCode", "markRead", "react"])

const unknownOperation = (operation: string) =>
  new EngineError({ code: "UNKNOWN_OPERATION", message: `the engine has no operation ${operation}`, transient: false, refusal: "not_supported" })

/** Runs the call on a connection. A name outside `EngineOperation` is refused, never looked up. */
export const applyEngineCall = (connection: EngineConnection, call: EngineCall): Effect.Effect<unknown, EngineError> =>
  Effect.suspend(() => {
    const [first = "", member, ...rest] = call.operation.split(".")
    const owner: Record<string, unknown> | undefined = member === undefined
      ? directs.has(first) ? connection as unknown as Record<string, unknown> : undefined
      : namespaces.has(first) && rest.length === 0
      ? connection[first as Namespace] as unknown as Record<string, unknown>
      : undefined
    const name = member ?? first
    if (owner === undefined || !Object.hasOwn(owner, name)) return Effect.fail(unknownOperation(call.operation))
    const target = owner[name]
    if (typeof target === "function") return target.apply(owner, call.args) as Effect.Effect<unknown, EngineError>
    return Effect.isEffect(target) ? target as Effect.Effect<unknown, EngineError> : Effect.fail(unknownOperation(call.operation))
  })
