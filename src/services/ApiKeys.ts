import { FileSystem, Path } from "@effect/platform"
import { Cache, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { AppSettings } from "../layers/Config.js"
import { ApiKeyRepo } from "../layers/store/ApiKeyRepo.js"
import { Unauthorized } from "./Errors.js"
import { uuidv7 } from "./Ids.js"

export type Role = "admin" | "operator" | "viewer"

/** Who is calling: the key that authenticated the request. */
export interface Principal {
  readonly keyId: string
  readonly name: string
  readonly role: Role
}

export class CurrentPrincipal extends Context.Tag("switchboard/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** Keys are long random strings, so one round of SHA-256 is enough to make a leaked table useless. */
export const hashApiKey = (key: string) => createHash("sha256").update(key, "utf8").digest("hex")

export const generateApiKey = () => `sb_${randomBytes(32).toString("base64url")}`

export interface ApiKeysService {
  readonly authenticate: (key: string) => Effect.Effect<Principal, Unauthorized>
  /**
   * Makes sure an admin key exists: `API_KEY` from the environment, or, on a first start with
   * no key at all, a generated one, printed once and written to `DATA_DIR/.api-key` (mode 0600).
   */
  readonly bootstrap: Effect.Effect<void>
}

export class ApiKeys extends Context.Tag("switchboard/ApiKeys")<ApiKeys, ApiKeysService>() {
  static readonly layer = Layer.effect(ApiKeys, Effect.suspend(() => make))
}

const invalidKey = new Unauthorized({ code: "UNAUTHORIZED", message: "a valid API key is required (X-API-Key header)" })

const make = Effect.gen(function*() {
  const repo = yield* ApiKeyRepo
  const settings = yield* AppSettings
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path

  const ENV_KEY_NAME = "bootstrap (API_KEY)"

  const insertAdmin = (name: string, key: string) =>
    repo.insert({
      id: uuidv7(),
      name,
      role: "admin",
      keyHash: hashApiKey(key),
      createdAt: new Date().toISOString(),
      expiresAt: null
    })

  const bootstrap = Effect.gen(function*() {
    if (Option.isSome(settings.apiKey)) {
      const key = Redacted.value(settings.apiKey.value)
      const hash = hashApiKey(key)
      if (Option.isNone(yield* repo.findByHash(hash))) yield* insertAdmin(ENV_KEY_NAME, key)
      // Changing API_KEY is how an operator rotates a leaked key: the previous one stops working.
      const revoked = yield* repo.revokeNamedExcept(ENV_KEY_NAME, hash, new Date().toISOString())
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
  }).pipe(Effect.orDie)

  // Every request authenticates: remember lookups briefly instead of querying each time.
  // A revoked key stops working within the TTL (key management invalidates at once).
  const lookups = yield* Cache.make({ capacity: 10_000, timeToLive: Duration.seconds(5), lookup: repo.findByHash })

  const service: ApiKeysService = {
    authenticate: (key) =>
      Effect.gen(function*() {
        if (key.length === 0) return yield* Effect.fail(invalidKey)
        const row = yield* lookups.get(hashApiKey(key))
        if (Option.isNone(row)) return yield* Effect.fail(invalidKey)
        const { id, name, role, expiresAt, revokedAt } = row.value
        if (revokedAt !== null) return yield* Effect.fail(new Unauthorized({ code: "UNAUTHORIZED", message: "this API key was revoked" }))
        if (expiresAt !== null && Date.parse(expiresAt) <= Date.now()) {
          return yield* Effect.fail(new Unauthorized({ code: "UNAUTHORIZED", message: "this API key has expired" }))
        }
        return { keyId: id, name, role }
      }),
    bootstrap
  }
  return service
})
