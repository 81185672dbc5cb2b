import type { PossiblyExtendedCacheStore } from "@whiskeysockets/baileys"
import { Duration, Effect, Runtime } from "effect"
import type { AuthState } from "../../Engine.js"

/**
 * Baileys' `userDevicesCache` (which devices each contact has) kept in the session's auth keys,
 * beside the Signal sessions for those devices, instead of in memory only.
 *
 * Why it matters: when Baileys (rc14) does not find a contact's devices in this cache it asks the
 * server (a usync query), and when the answer names the contact's LID it throws the existing
 * Signal sessions away and fetches new ones (`assertSessions(lids, true)`). With the in-memory
 * default every restart, every reconnect and every 5 minutes of use did that: each contact got
 * prekey messages again and lost a one-time prekey each time. Kept here, a restarted connection
 * finds the devices and goes on with the sessions it has.
 *
 * The LID ↔ phone mapping needs nothing of this kind: Baileys already keeps it in the auth keys
 * (`lid-mapping`), which the Store holds.
 */

/** The auth-key type the device lists are stored under (one key per WhatsApp user). */
export const DEVICES_KEY = "user-devices"

/**
 * How long a device list is used before the server is asked again. WhatsApp tells a connection
 * when a contact adds or removes a device (Baileys applies that to this cache), so the list
 * seldom goes stale while connected; the age limit catches what changed while it was not, at
 * the cost of one re-key per contact and day (rc14 re-keys after every device query).
 */
export const DEVICES_TTL = Duration.hours(24)

/** What is stored per user: Baileys' device entries, and when they were fetched. */
interface StoredDevices {
  readonly devices: unknown
  readonly savedAt: number
}

const isStoredDevices = (value: unknown): value is StoredDevices =>
  typeof value === "object" && value !== null && "devices" in value && typeof (value as StoredDevices).savedAt === "number"

/**
 * The cache Baileys reads and writes device lists through, over the session's `AuthState`.
 * What one connection read or wrote is also kept in memory, so a send does not read the Store
 * for devices it already knows. A Store that cannot be read counts as a miss (Baileys then asks
 * the server, as it would without this cache); a failed write is left out, for the same reason.
 */
export const makeDeviceCache = (
  auth: AuthState,
  runtime: Runtime.Runtime<never>,
  options: { readonly ttl?: Duration.DurationInput; readonly now?: () => number } = {}
): PossiblyExtendedCacheStore => {
  const ttlMs = Duration.toMillis(options.ttl ?? DEVICES_TTL)
  const now = options.now ?? Date.now
  const run = Runtime.runPromise(runtime)
  const memory = new Map<string, StoredDevices>()
  /** Lists saved before this moment are ignored (`flushAll`). */
  let flushedAt = 0

  const fresh = (stored: StoredDevices | undefined): stored is StoredDevices =>
    stored !== undefined && stored.savedAt >= flushedAt && now() - stored.savedAt < ttlMs

  const mget = async <T>(users: Array<string>): Promise<Record<string, T | undefined>> => {
    const found: Record<string, T | undefined> = {}
    const missing = users.filter((user) => {
      const known = memory.get(user)
      if (fresh(known)) found[user] = known.devices as T
      return !fresh(known)
    })
    if (missing.length > 0) {
      const stored = await run(Effect.orElseSucceed(auth.getKeys(DEVICES_KEY, missing), (): Record<string, unknown> => ({})))
      for (const user of missing) {
        const value = stored[user]
        if (!isStoredDevices(value) || !fresh(value)) continue
        memory.set(user, value)
        found[user] = value.devices as T
      }
    }
    return found
  }

  const write = (changes: Record<string, StoredDevices | null>) => {
    for (const [user, value] of Object.entries(changes)) {
      if (value === null) memory.delete(user)
      else memory.set(user, value)
    }
    return run(Effect.ignore(auth.setKeys({ [DEVICES_KEY]: changes })))
  }

  const mset = <T>(entries: Array<{ key: string; value: T }>) => {
    const savedAt = now()
    return write(Object.fromEntries(entries.map(({ key, value }) => [key, { devices: value, savedAt }])))
  }

  return {
    mget,
    mset,
    // Baileys' type says `Promise<T>`, but it reads a miss as `undefined`, as NodeCache gives it.
    get: async <T>(user: string) => (await mget<T>([user]))[user] as T,
    set: (user, value) => mset([{ key: user, value }]),
    del: (user) => write({ [user]: null }),
    mdel: (users) => write(Object.fromEntries(users.map((user) => [user, null]))),
    flushAll: () => {
      memory.clear()
      flushedAt = now()
    }
  }
}
