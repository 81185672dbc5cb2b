import { Schema } from "effect"

/** `viewer` reads; `operator` also runs sessions, sends and manages webhooks; `admin` does everything. */
export const Role = Schema.Literal("admin", "operator", "viewer")
export type Role = typeof Role.Type

const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 }

/** Whether `role` includes everything `required` may do. */
export const roleCovers = (role: Role, required: Role) => rank[role] >= rank[required]

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
