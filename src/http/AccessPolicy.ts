import { Effect, Option } from "effect"
import { type Role, roleCovers } from "../domain/ApiKey.js"
import type { Principal } from "../domain/Principal.js"
import { Sessions } from "../services/Sessions.js"
import { Forbidden } from "../domain/Errors.js"

/**
 * Who may call what. Each endpoint declares the role it needs beside its declaration in the
 * contract (`RequiredRole`): reads are for viewers, changes for operators, key management, the
 * audit log and the metrics for admins. A route with a `:sessionId` is also limited to the
 * key's sessions. Routes that reach several sessions at once check the key's sessions in their
 * handlers (`requireEverySession`, `sessionAllowed`).
 */

export const forbidden = (message: string) => new Forbidden({ code: "FORBIDDEN", message })

export const checkRole = (principal: Principal, required: Role) =>
  roleCovers(principal.role, required)
    ? Effect.void
    : Effect.fail(forbidden(`this key's role (${principal.role}) may not do this; it needs ${required}`))

/**
 * Whether the key may use the session: its `allowedSessions` name the session's id or its name.
 * A session that does not exist is not allowed either (a limited key learns nothing of others).
 */
export const sessionAllowed = (principal: Principal, sessionId: string) =>
  Effect.gen(function*() {
    const allowed = principal.allowedSessions
    if (allowed === null || allowed.includes(sessionId)) return true
    const session = yield* (yield* Sessions).get(sessionId).pipe(
      Effect.map(Option.some),
      Effect.catchTag("NotFound", () => Effect.succeedNone)
    )
    return Option.isSome(session) && allowed.includes(session.value.name)
  })

export const requireSession = (principal: Principal, sessionId: string) =>
  Effect.flatMap(sessionAllowed(principal, sessionId), (allowed) =>
    allowed ? Effect.void : Effect.fail(forbidden(`this key may not use session ${sessionId}`)))

/** For what spans every session (global webhooks, the whole event stream): keys limited to some sessions may not. */
export const requireEverySession = (principal: Principal) =>
  principal.allowedSessions === null
    ? Effect.void
    : Effect.fail(forbidden("this key is limited to some sessions; this reaches all of them"))
