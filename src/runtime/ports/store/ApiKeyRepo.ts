import { Context, type Effect, type Option } from "effect"
import type { Role } from "../../../domain/ApiKey.js"
import type { StoreUnavailable } from "../../../domain/Errors.js"
import type { Page, PageRequest } from "../../../domain/Pagination.js"

/** What a key may do besides its role: `null` means no limit of that kind. */
export interface ApiKeyLimits {
  /** Session ids or names the key may use. */
  readonly allowedSessions: ReadonlyArray<string> | null
  /** IPv4/IPv6 networks the key may be used from. */
  readonly allowedIps: ReadonlyArray<string> | null
  /** Its own requests-a-minute limit instead of RATE_LIMIT_PER_MINUTE (0 = none). */
  readonly rateLimitPerMinute: number | null
}

export interface NewApiKey extends ApiKeyLimits {
  readonly id: string
  readonly name: string
  readonly role: Role
  /** Only the hash of a key is stored; the key itself is shown once, at creation. */
  readonly keyHash: string
  /** The key's first characters, to tell keys apart in a list. */
  readonly prefix: string | null
  readonly createdAt: string
  readonly expiresAt: string | null
}

export interface ApiKeyRow extends NewApiKey {
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
  readonly updatedAt: string
}

export type ApiKeyChanges = Partial<Pick<ApiKeyRow, "name" | "role" | "expiresAt" | keyof ApiKeyLimits>>


export class ApiKeyRepo extends Context.Tag("switchboard/ApiKeyRepo")<ApiKeyRepo, {
  readonly insert: (key: NewApiKey) => Effect.Effect<void, StoreUnavailable>
  readonly findByHash: (keyHash: string) => Effect.Effect<Option.Option<ApiKeyRow>, StoreUnavailable>
  readonly findById: (id: string) => Effect.Effect<Option.Option<ApiKeyRow>, StoreUnavailable>
  readonly list: (page: Option.Option<PageRequest>) => Effect.Effect<Page<ApiKeyRow>, StoreUnavailable>
  readonly update: (id: string, changes: Partial<Pick<ApiKeyRow, "name" | "role" | "expiresAt" | keyof ApiKeyLimits>>, at: string) => Effect.Effect<void, StoreUnavailable>
  readonly revoke: (id: string, at: string) => Effect.Effect<void, StoreUnavailable>
  readonly remove: (id: string) => Effect.Effect<void, StoreUnavailable>
  readonly touch: (id: string, at: string) => Effect.Effect<void, StoreUnavailable>
  readonly countUsableAdmins: (now: string, exceptId: string) => Effect.Effect<number, StoreUnavailable>
  readonly count: () => Effect.Effect<number, StoreUnavailable>
  readonly revokeNamedExcept: (name: string, keepHash: string, at: string) => Effect.Effect<number, StoreUnavailable>
}>() {}
