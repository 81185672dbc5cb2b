import { Schema } from "effect"
import { cidrProblem } from "./cidr.js"

/** `viewer` reads; `operator` also runs sessions, sends and manages webhooks; `admin` does everything. */
export const Role = Schema.Literal("admin", "operator", "viewer")
export type Role = typeof Role.Type

const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 }

/** Whether `role` includes everything `required` may do. */
export const roleCovers = (role: Role, required: Role) => rank[role] >= rank[required]

const name = Schema.Trim.pipe(Schema.minLength(1, { message: () => "name must not be empty" }), Schema.maxLength(100))

const SessionRef = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))

const Network = Schema.String.pipe(
  Schema.filter((entry) => cidrProblem(entry) ?? true)
).annotations({ description: "An IPv4/IPv6 address or CIDR, e.g. 10.0.0.0/8 or 2001:db8::/32" })

const limits = {
  allowedSessions: Schema.optional(Schema.NullOr(Schema.Array(SessionRef).pipe(Schema.maxItems(1000)))).annotations({
    description: "Session ids or names this key may use; null or absent: all sessions."
  }),
  allowedIps: Schema.optional(Schema.NullOr(Schema.Array(Network).pipe(Schema.minItems(1), Schema.maxItems(100)))).annotations({
    description: "Networks this key may be used from; null or absent: anywhere (within ALLOWED_CIDRS)."
  }),
  rateLimitPerMinute: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.between(0, 1_000_000)))).annotations({
    description: "Requests a minute for this key instead of RATE_LIMIT_PER_MINUTE; 0 = no limit."
  }),
  expiresAt: Schema.optional(Schema.NullOr(Schema.DateTimeUtc)).annotations({ description: "When the key stops working; null: never." })
}

export const CreateApiKeyRequest = Schema.Struct({ name, role: Role, ...limits })
export type CreateApiKeyRequest = typeof CreateApiKeyRequest.Type

export const UpdateApiKeyRequest = Schema.Struct({ name: Schema.optional(name), role: Schema.optional(Role), ...limits })
export type UpdateApiKeyRequest = typeof UpdateApiKeyRequest.Type

export const ApiKeyStatus = Schema.Literal("active", "expired", "revoked")

/** A key as listed: never the key itself, nor its hash. */
export const ApiKey = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  role: Role,
  status: ApiKeyStatus,
  prefix: Schema.NullOr(Schema.String).annotations({ description: "The key's first characters, to recognise it." }),
  allowedSessions: Schema.NullOr(Schema.Array(Schema.String)),
  allowedIps: Schema.NullOr(Schema.Array(Schema.String)),
  rateLimitPerMinute: Schema.NullOr(Schema.Number),
  expiresAt: Schema.NullOr(Schema.String),
  lastUsedAt: Schema.NullOr(Schema.String),
  revokedAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type ApiKey = typeof ApiKey.Type

/** The answer to a create: the key, shown this once. */
export const CreatedApiKey = Schema.Struct({ ...ApiKey.fields, key: Schema.String })
export type CreatedApiKey = typeof CreatedApiKey.Type
