import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { fromCount } from "./columns.js"

import type { Role } from "../../services/ApiKeys.js"

export type ApiKeyRole = Role

export interface NewApiKey {
  readonly id: string
  readonly name: string
  readonly role: ApiKeyRole
  /** Only the hash of a key is stored; the key itself is shown once, at creation. */
  readonly keyHash: string
  readonly createdAt: string
  readonly expiresAt: string | null
}

export interface ApiKeyRow extends NewApiKey {
  readonly lastUsedAt: string | null
  readonly revokedAt: string | null
}

interface ApiKeyRecord {
  readonly id: string
  readonly name: string
  readonly key_hash: string
  readonly role: ApiKeyRole
  readonly created_at: string
  readonly last_used_at: string | null
  readonly expires_at: string | null
  readonly revoked_at: string | null
}

const fromRecord = (record: ApiKeyRecord): ApiKeyRow => ({
  id: record.id,
  name: record.name,
  role: record.role,
  keyHash: record.key_hash,
  createdAt: record.created_at,
  lastUsedAt: record.last_used_at,
  expiresAt: record.expires_at,
  revokedAt: record.revoked_at
})

export class ApiKeyRepo extends Effect.Service<ApiKeyRepo>()("switchboard/ApiKeyRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = Effect.fn("ApiKeyRepo.insert")(
      (key: NewApiKey) =>
        sql`INSERT INTO api_keys ${
          sql.insert({
            id: key.id,
            name: key.name,
            key_hash: key.keyHash,
            role: key.role,
            created_at: key.createdAt,
            expires_at: key.expiresAt
          })
        }`.pipe(Effect.asVoid),
      Effect.orDie
    )

    /** Revoked and expired keys are found too: judging them is the caller's business. */
    const findByHash = Effect.fn("ApiKeyRepo.findByHash")(
      (keyHash: string) =>
        sql<ApiKeyRecord>`SELECT * FROM api_keys WHERE key_hash = ${keyHash}`.pipe(
          Effect.map((records) => Option.map(Option.fromNullable(records[0]), fromRecord))
        ),
      Effect.orDie
    )

    /** All keys ever created (revoked included), e.g. to decide whether to bootstrap one. */
    const count = Effect.fn("ApiKeyRepo.count")(
      () =>
        sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM api_keys`.pipe(
          Effect.map(([row]) => fromCount(row?.total))
        ),
      Effect.orDie
    )

    /** Revokes every live key of that name but the one with `keepHash`; returns how many. */
    const revokeNamedExcept = Effect.fn("ApiKeyRepo.revokeNamedExcept")(
      (name: string, keepHash: string, at: string) =>
        sql<{ readonly id: string }>`UPDATE api_keys SET revoked_at = ${at}
          WHERE name = ${name} AND key_hash <> ${keepHash} AND revoked_at IS NULL RETURNING id`.pipe(
          Effect.map((rows) => rows.length)
        ),
      Effect.orDie
    )

    return { insert, findByHash, count, revokeNamedExcept } as const
  })
}) {}
