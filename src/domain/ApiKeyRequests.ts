import { Schema } from "effect"
import { Role } from "./ApiKey.js"
import { cidrProblem } from "./cidr.js"

// The bodies of creating and updating a key, apart from ApiKey.ts: an allowed network is checked
// with node:net, and the listed key's schema is also read by the dashboard's type check, which
// has no Node.

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
