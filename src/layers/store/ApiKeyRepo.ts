import { ApiKeyRepo, type NewApiKey, type ApiKeyRow, type ApiKeyChanges } from "../../runtime/ports/store/ApiKeyRepo.js"
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import type { Role } from "../../domain/ApiKey.js"
import type { PageRequest } from "../../domain/Pagination.js"
import { fromCount, fromJsonColumn, toJsonColumn } from "./columns.js"
import { listByRootIds } from "./paging.js"
import { storeOperation } from "./storeFailure.js"

interface ApiKeyRecord {
  readonly id: string
  readonly name: string
  readonly key_hash: string
  readonly key_prefix: string | null
  readonly role: Role
  readonly allowed_sessions: string | null
  readonly allowed_ips: string | null
  readonly rate_limit_per_minute: unknown
  readonly created_at: string
  readonly updated_at: string | null
  readonly last_used_at: string | null
  readonly expires_at: string | null
  readonly revoked_at: string | null
}

const fromRecord = (record: ApiKeyRecord): ApiKeyRow => ({
  id: record.id,
  name: record.name,
  role: record.role,
  keyHash: record.key_hash,
  prefix: record.key_prefix,
  allowedSessions: fromJsonColumn<ReadonlyArray<string>>(record.allowed_sessions),
  allowedIps: fromJsonColumn<ReadonlyArray<string>>(record.allowed_ips),
  rateLimitPerMinute: record.rate_limit_per_minute === null ? null : Number(record.rate_limit_per_minute),
  createdAt: record.created_at,
  updatedAt: record.updated_at ?? record.created_at,
  lastUsedAt: record.last_used_at,
  expiresAt: record.expires_at,
  revokedAt: record.revoked_at
})

const changedColumns = (changes: ApiKeyChanges) => ({
  ...(changes.name === undefined ? {} : { name: changes.name }),
  ...(changes.role === undefined ? {} : { role: changes.role }),
  ...(changes.expiresAt === undefined ? {} : { expires_at: changes.expiresAt }),
  ...(changes.allowedSessions === undefined ? {} : { allowed_sessions: toJsonColumn(changes.allowedSessions) }),
  ...(changes.allowedIps === undefined ? {} : { allowed_ips: toJsonColumn(changes.allowedIps) }),
  ...(changes.rateLimitPerMinute === undefined ? {} : { rate_limit_per_minute: changes.rateLimitPerMinute })
})

export const SqlApiKeyRepo = Layer.effect(
  ApiKeyRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = storeOperation(
      (key: NewApiKey) =>
        sql`INSERT INTO api_keys ${
          sql.insert({
            id: key.id,
            name: key.name,
            key_hash: key.keyHash,
            key_prefix: key.prefix,
            role: key.role,
            allowed_sessions: toJsonColumn(key.allowedSessions),
            allowed_ips: toJsonColumn(key.allowedIps),
            rate_limit_per_minute: key.rateLimitPerMinute,
            created_at: key.createdAt,
            updated_at: key.createdAt,
            expires_at: key.expiresAt
          })
        }`.pipe(Effect.asVoid))

    const findOne = (where: Fragment) =>
      sql<ApiKeyRecord>`SELECT * FROM api_keys WHERE ${where}`.pipe(
        Effect.map((records) => Option.map(Option.fromNullable(records[0]), fromRecord))
      )

    /** Revoked and expired keys are found too: judging them is the caller's business. */
    const findByHash = storeOperation((keyHash: string) => findOne(sql`key_hash = ${keyHash}`))

    const findById = storeOperation((id: string) => findOne(sql`id = ${id}`))

    /** Every key, oldest first, revoked and expired ones included. */
    const list = storeOperation(
      (page: Option.Option<PageRequest>) =>
        listByRootIds(sql, {
          table: "api_keys",
          where: sql.literal("1 = 1"),
          orderBy: sql.literal("created_at ASC, id ASC"),
          page,
          loadByIds: (ids) =>
            Effect.map(sql<ApiKeyRecord>`SELECT * FROM api_keys WHERE id IN ${sql.in(ids)}`, (records) => records.map(fromRecord)),
          idOf: (row) => row.id
        }))

    const update = storeOperation(
      (id: string, changes: ApiKeyChanges, at: string) =>
        sql`UPDATE api_keys SET ${sql.update({ ...changedColumns(changes), updated_at: at })} WHERE id = ${id}`.pipe(Effect.asVoid))

    const revoke = storeOperation(
      (id: string, at: string) =>
        sql`UPDATE api_keys SET revoked_at = ${at}, updated_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`.pipe(Effect.asVoid))

    const remove = storeOperation(
      (id: string) => sql`DELETE FROM api_keys WHERE id = ${id}`.pipe(Effect.asVoid))

    /** Records a use; cheap enough to call at most once a minute per key. */
    const touch = storeOperation(
      (id: string, at: string) => sql`UPDATE api_keys SET last_used_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid))

    /** Admin keys that work now (not revoked, not expired), except `exceptId`. */
    const countUsableAdmins = storeOperation(
      (now: string, exceptId: string) =>
        sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM api_keys
          WHERE role = 'admin' AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})
            AND id <> ${exceptId}`.pipe(Effect.map(([row]) => fromCount(row?.total))))

    /** All keys ever created (revoked included), e.g. to decide whether to bootstrap one. */
    const count = storeOperation(
      () =>
        sql<{ readonly total: unknown }>`SELECT COUNT(*) AS total FROM api_keys`.pipe(
          Effect.map(([row]) => fromCount(row?.total))
        ))

    /** Revokes every live key of that name but the one with `keepHash`; returns how many. */
    const revokeNamedExcept = storeOperation(
      (name: string, keepHash: string, at: string) =>
        sql<{ readonly id: string }>`UPDATE api_keys SET revoked_at = ${at}
          WHERE name = ${name} AND key_hash <> ${keepHash} AND revoked_at IS NULL RETURNING id`.pipe(
          Effect.map((rows) => rows.length)
        ))

    return { insert, findByHash, findById, list, update, revoke, remove, touch, countUsableAdmins, count, revokeNamedExcept } as const
  })
)
