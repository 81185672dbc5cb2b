import type { StoreUnavailable } from "../domain/Errors.js"
import { FileSystem, Path } from "@effect/platform"
import { Clock, Context, DateTime, Duration, Effect, FiberSet, Layer, Option, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { AppSettings } from "../domain/Settings.js"
import { type ApiKeyChanges, ApiKeyRepo, type ApiKeyRow } from "../runtime/ports/store/ApiKeyRepo.js"
import type { ApiKey, CreatedApiKey } from "../domain/ApiKey.js"
import type { Principal } from "../domain/Principal.js"
import type { CreateApiKeyRequest, UpdateApiKeyRequest } from "../domain/ApiKeyRequests.js"
import { bestEffort } from "../runtime/bestEffort.js"
import { CachedCopies } from "../runtime/CachedCopies.js"
import { Conflict, NotFound, Unauthorized, ValidationFailed } from "../domain/Errors.js"
import { uuidv7 } from "../domain/uuidv7.js"
import { networkList } from "../domain/cidr.js"
import type { Page, PageRequest } from "../domain/Pagination.js"

export type { Role } from "../domain/ApiKey.js"

/** Keys are long random strings, so one round of SHA-256 is enough to make a leaked table useless. */
export const hashApiKey = (key: string) => createHash("sha256").update(key, "utf8").digest("hex")

export const generateApiKey = () => `sb_${randomBytes(32).toString("base64url")}`

/** Enough of a key to recognise it in a list, far too little to guess the rest (43 random characters). */
const prefixOf = (key: string) => `${key.slice(0, 9)}…`

export interface ApiKeysService {
  readonly authenticate: (key: string) => Effect.Effect<Principal, Unauthorized | StoreUnavailable>
  readonly create: (request: CreateApiKeyRequest) => Effect.Effect<CreatedApiKey, ValidationFailed | StoreUnavailable>
  readonly list: (page: Option.Option<PageRequest>) => Effect.Effect<Page<ApiKey>, StoreUnavailable>
  readonly get: (keyId: string) => Effect.Effect<ApiKey, NotFound | StoreUnavailable>
  readonly update: (keyId: string, request: UpdateApiKeyRequest) => Effect.Effect<ApiKey, NotFound | Conflict | ValidationFailed | StoreUnavailable>
  readonly revoke: (keyId: string) => Effect.Effect<ApiKey, NotFound | Conflict | StoreUnavailable>
  readonly remove: (keyId: string) => Effect.Effect<void, NotFound | Conflict | StoreUnavailable>
  /**
   * Makes sure an admin key exists: `API_KEY` from the environment, or, on a first start with
   * no key at all, a generated one, printed once and written to `DATA_DIR/.api-key` (mode 0600).
   */
  readonly bootstrap: Effect.Effect<void, StoreUnavailable>
}

export class ApiKeys extends Context.Tag("switchboard/ApiKeys")<ApiKeys, ApiKeysService>() {
  static readonly layer = Layer.scoped(ApiKeys, Effect.suspend(() => make))
}

/** How long a key lookup is remembered, and how many at most. */
const LOOKUP_TTL_MS = 5_000
const LOOKUP_CAPACITY = 10_000

const invalidKey = new Unauthorized({ code: "UNAUTHORIZED", message: "a valid API key is required (X-API-Key header)" })

const statusOf = (row: ApiKeyRow, now: number): ApiKey["status"] =>
  row.revokedAt !== null ? "revoked" : row.expiresAt !== null && Date.parse(row.expiresAt) <= now ? "expired" : "active"

/** The key as callers see it; its status as of `now` (epoch millis). */
const toApiKey = (row: ApiKeyRow, now: number): ApiKey => ({
  id: row.id,
  name: row.name,
  role: row.role,
  status: statusOf(row, now),
  prefix: row.prefix,
  allowedSessions: row.allowedSessions,
  allowedIps: row.allowedIps,
  rateLimitPerMinute: row.rateLimitPerMinute,
  expiresAt: row.expiresAt,
  lastUsedAt: row.lastUsedAt,
  revokedAt: row.revokedAt,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt
})

const expiryOf = (expiresAt: DateTime.Utc | null | undefined) =>
  Effect.gen(function*() {
    if (expiresAt === undefined || expiresAt === null) return expiresAt
    if (DateTime.toEpochMillis(expiresAt) <= (yield* Clock.currentTimeMillis)) {
      return yield* new ValidationFailed({ code: "VALIDATION_FAILED", message: "expiresAt must be in the future" })
    }
    return DateTime.formatIso(expiresAt)
  })

/** A key's last use is written at most this often: every request reads it, few need to write it. */
const TOUCH_INTERVAL_MS = 60_000

/** How long closing the service waits for last uses still being written before it interrupts them. */
const TOUCH_DRAIN_TIMEOUT = Duration.seconds(2)

/** What `CachedCopies` calls a change of keys. */
const KEYS_TOPIC = "api_keys"

const make = Effect.gen(function*() {
  const repo = yield* ApiKeyRepo
  const settings = yield* AppSettings
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path

  const ENV_KEY_NAME = "bootstrap (API_KEY)"

  const insertAdmin = (name: string, key: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => repo.insert({
      id: uuidv7(now),
      name,
      role: "admin",
      keyHash: hashApiKey(key),
      prefix: prefixOf(key),
      allowedSessions: null,
      allowedIps: null,
      rateLimitPerMinute: null,
      createdAt: new Date(now).toISOString(),
      expiresAt: null
    }))

  const bootstrap = Effect.gen(function*() {
    if (Option.isSome(settings.apiKey)) {
      const key = Redacted.value(settings.apiKey.value)
      const hash = hashApiKey(key)
      if (Option.isNone(yield* repo.findByHash(hash))) yield* insertAdmin(ENV_KEY_NAME, key)
      // Changing API_KEY is how an operator rotates a leaked key: the previous one stops working.
      const revoked = yield* repo.revokeNamedExcept(ENV_KEY_NAME, hash, DateTime.formatIso(yield* DateTime.now))
      if (revoked > 0) yield* Effect.logWarning(`API_KEY changed: revoked the previous environment key`)
      return
    }
    if ((yield* repo.count()) > 0) return
    const key = generateApiKey()
    const file = path.join(settings.dataDir, ".api-key")
    yield* fs.makeDirectory(settings.dataDir, { recursive: true })
    yield* fs.writeFileString(file, `${key}\n`, { mode: 0o600 })
    yield* fs.chmod(file, 0o600)
    yield* insertAdmin("bootstrap (generated)", key)
    // Printed once, on purpose, to stdout and not through the logger.
    yield* Effect.sync(() =>
      console.log(`\n  Generated an admin API key (also saved to ${file}, mode 0600):\n\n    ${key}\n`)
    )
  }).pipe(Effect.orDie, Effect.withSpan("ApiKeys.bootstrap"))

  // Every request authenticates: remember lookups briefly instead of querying each time. Key
  // management forgets them at once, here and (in a cluster) on every runner; another
  // gateway's change to a shared database is seen within the TTL.
  // Only answers are remembered: a lookup the Store could not answer is asked again next time.
  // A plain Map (the oldest dropped first past its capacity), not Effect's Cache: its keyed
  // hashing and bookkeeping per get cost more than the rest of a request's authentication.
  const remembered = new Map<string, { readonly row: Option.Option<ApiKeyRow>; readonly until: number }>()
  /** Counts the forgettings: a lookup that ran across one (a key changed meanwhile) is not kept. */
  let generation = 0
  const lookup = (hash: string, now: number) => {
    const hit = remembered.get(hash)
    if (hit !== undefined && hit.until > now) return Effect.succeed(hit.row)
    const startedIn = generation
    return Effect.tap(repo.findByHash(hash), (row) =>
      Effect.sync(() => {
        if (generation !== startedIn) return
        remembered.delete(hash)
        if (remembered.size >= LOOKUP_CAPACITY) remembered.delete(remembered.keys().next().value!)
        remembered.set(hash, { row, until: now + LOOKUP_TTL_MS })
      }))
  }
  const forgetRemembered = Effect.sync(() => {
    generation++
    remembered.clear()
  })
  const cachedCopies = yield* CachedCopies
  yield* cachedCopies.onChange(KEYS_TOPIC, forgetRemembered)
  const lastTouched = new Map<string, number>()

  // A request does not wait for its key's last use to be written, but the service does: the
  // writes run in its own scope, and closing it lets them finish (the Store closes after it)
  // before interrupting what is left.
  const touches = yield* FiberSet.make<void, never>()
  yield* Effect.addFinalizer(() => FiberSet.awaitEmpty(touches).pipe(Effect.timeout(TOUCH_DRAIN_TIMEOUT), Effect.ignore))

  /** Logged with the key's id, never the key. */
  const recordUse = (keyId: string, at: string) =>
    repo.touch(keyId, at).pipe(bestEffort("api keys: recording a key's last use"), Effect.annotateLogs("keyId", keyId))

  const touch = (keyId: string, now: number) => {
    const last = lastTouched.get(keyId)
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return Effect.void
    lastTouched.set(keyId, now)
    return Effect.asVoid(FiberSet.run(touches, recordUse(keyId, new Date(now).toISOString())))
  }

  // Untraced: it runs on every request, and a span is ~30 Effect operations and a copy of the
  // context (issue 19); no tracer is exported.
  const authenticate = Effect.fnUntraced(function*(key: string) {
    if (key.length === 0 || key.length > 512) return yield* Effect.fail(invalidKey)
    const now = yield* Clock.currentTimeMillis
    const row = yield* lookup(hashApiKey(key), now)
    if (Option.isNone(row)) return yield* Effect.fail(invalidKey)
    const found = row.value
    const status = statusOf(found, now)
    if (status === "revoked") return yield* new Unauthorized({ code: "UNAUTHORIZED", message: "this API key was revoked" })
    if (status === "expired") return yield* new Unauthorized({ code: "UNAUTHORIZED", message: "this API key has expired" })
    yield* touch(found.id, now)
    return {
      keyId: found.id,
      name: found.name,
      role: found.role,
      allowedSessions: found.allowedSessions,
      allowedIps: found.allowedIps === null ? null : networkList(found.allowedIps),
      rateLimitPerMinute: found.rateLimitPerMinute
    } satisfies Principal
  })

  const find = (keyId: string) =>
    Effect.flatMap(repo.findById(keyId), Option.match({
      onNone: () => Effect.fail(new NotFound({ code: "API_KEY_NOT_FOUND", message: `no API key ${keyId}` })),
      onSome: Effect.succeed
    }))

  /** The last admin key that works cannot be revoked, removed, demoted or set to expire: nobody could manage keys after. */
  const keepAnAdmin = (row: ApiKeyRow, losesAdmin: boolean) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (!losesAdmin || row.role !== "admin" || statusOf(row, now) !== "active") return
      if ((yield* repo.countUsableAdmins(new Date(now).toISOString(), row.id)) > 0) return
      return yield* new Conflict({ code: "LAST_ADMIN_KEY", message: "this is the last working admin key; create another admin key first" })
    })

  const forgetLookups = Effect.zipRight(forgetRemembered, cachedCopies.changed(KEYS_TOPIC))

  const service: ApiKeysService = {
    authenticate,
    create: Effect.fn("ApiKeys.create")(function*(request) {
      const expiresAt = yield* expiryOf(request.expiresAt)
      const key = generateApiKey()
      const now = yield* Clock.currentTimeMillis
      const id = uuidv7(now)
      yield* repo.insert({
        id,
        name: request.name,
        role: request.role,
        keyHash: hashApiKey(key),
        prefix: prefixOf(key),
        allowedSessions: request.allowedSessions ?? null,
        allowedIps: request.allowedIps ?? null,
        rateLimitPerMinute: request.rateLimitPerMinute ?? null,
        createdAt: new Date(now).toISOString(),
        expiresAt: expiresAt ?? null
      })
      return { ...toApiKey(yield* find(id).pipe(Effect.catchTag("NotFound", Effect.die)), now), key }
    }),
    list: Effect.fn("ApiKeys.list")(function*(page) {
      const { items, total } = yield* repo.list(page)
      const now = yield* Clock.currentTimeMillis
      return { items: items.map((row) => toApiKey(row, now)), total }
    }),
    get: Effect.fn("ApiKeys.get")((keyId) => Effect.zipWith(find(keyId), Clock.currentTimeMillis, toApiKey)),
    update: Effect.fn("ApiKeys.update")(function*(keyId, request) {
      const row = yield* find(keyId)
      const expiresAt = yield* expiryOf(request.expiresAt)
      const changes: ApiKeyChanges = {
        ...(request.name === undefined ? {} : { name: request.name }),
        ...(request.role === undefined ? {} : { role: request.role }),
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(request.allowedSessions === undefined ? {} : { allowedSessions: request.allowedSessions }),
        ...(request.allowedIps === undefined ? {} : { allowedIps: request.allowedIps }),
        ...(request.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: request.rateLimitPerMinute })
      }
      const narrowsAdmin = (changes.role !== undefined && changes.role !== "admin") || typeof changes.expiresAt === "string" ||
        (changes.allowedIps !== undefined && changes.allowedIps !== null)
      yield* keepAnAdmin(row, narrowsAdmin)
      const now = yield* Clock.currentTimeMillis
      yield* repo.update(keyId, changes, new Date(now).toISOString())
      yield* forgetLookups
      return toApiKey(yield* find(keyId), now)
    }),
    revoke: Effect.fn("ApiKeys.revoke")(function*(keyId) {
      yield* keepAnAdmin(yield* find(keyId), true)
      const now = yield* Clock.currentTimeMillis
      yield* repo.revoke(keyId, new Date(now).toISOString())
      yield* forgetLookups
      return toApiKey(yield* find(keyId), now)
    }),
    remove: Effect.fn("ApiKeys.remove")(function*(keyId) {
      yield* keepAnAdmin(yield* find(keyId), true)
      yield* repo.remove(keyId)
      yield* forgetLookups
    }),
    bootstrap
  }
  return service
})
