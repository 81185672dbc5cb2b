import { Context } from "effect"
import type { Role } from "./ApiKey.js"
import type { NetworkList } from "./cidr.js"

/** Who is calling: the key that authenticated the request, with its limits. */
export interface Principal {
  readonly keyId: string
  readonly name: string
  readonly role: Role
  /** Session ids or names; `null`: every session. */
  readonly allowedSessions: ReadonlyArray<string> | null
  /** `null`: any address (within ALLOWED_CIDRS). */
  readonly allowedIps: NetworkList | null
  /** `null`: RATE_LIMIT_PER_MINUTE. */
  readonly rateLimitPerMinute: number | null
}

/** The caller of the request being answered, once authentication let it in. */
export class CurrentPrincipal extends Context.Tag("switchboard/CurrentPrincipal")<CurrentPrincipal, Principal>() {}
