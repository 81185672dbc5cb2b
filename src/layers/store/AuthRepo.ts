import { AuthRepo } from "../../runtime/ports/store/AuthRepo.js"
import { SqlClient } from "@effect/sql"
import { Array as Arr, Effect, Layer, Option } from "effect"
import type { AuthState } from "../../runtime/Engine.js"
import { readTogether } from "./readTogether.js"
import { orStoreUnavailable, storeOperation } from "./storeFailure.js"

/** The single row holding a session's credentials; Signal keys use kind=<type>, key_id=<id>. */
const CREDS = "creds"

/** Rows per multi-row upsert: far below the bind-parameter limits of SQLite and Postgres. */
const UPSERT_CHUNK = 200

/**
 * JSON that round-trips binary data: engines (Baileys) keep keys as `Buffer`/`Uint8Array`,
 * which plain JSON would turn into `{type, data: number[]}` or an index-keyed object.
 * Stored as `{"type":"Buffer","data":"<base64>"}`; revived as a `Buffer` (a `Uint8Array`).
 */
function binaryReplacer(this: unknown, key: string, value: unknown): unknown {
  // `Buffer#toJSON` has already run on `value`; the holder still has the original.
  const original = (this as Record<string, unknown>)[key]
  return original instanceof Uint8Array
    ? { type: "Buffer", data: Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString("base64") }
    : value
}

const binaryReviver = (_key: string, value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  const { type, data } = value as { readonly type?: unknown; readonly data?: unknown }
  if (type !== "Buffer") return value
  if (typeof data === "string") return Buffer.from(data, "base64")
  return Array.isArray(data) ? Buffer.from(data as Array<number>) : value
}

export const encodeAuthValue = (value: unknown): string => {
  const text = JSON.stringify(value, binaryReplacer)
  // Functions and `undefined` have no JSON form; storing NULL would lose them silently.
  if (text === undefined) throw new TypeError("auth value is not JSON-serializable")
  return text
}

export const decodeAuthValue = (text: string): unknown => JSON.parse(text, binaryReviver)

/** The engines' persisted authentication state, one `AuthState` per session. */
export const SqlAuthRepo = Layer.scoped(
  AuthRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = (sessionId: string, kind: string, entries: ReadonlyArray<readonly [string, unknown]>) =>
      Effect.forEach(Arr.chunksOf(entries, UPSERT_CHUNK), (chunk) =>
        Effect.suspend(() =>
          sql`INSERT INTO engine_auth ${
            sql.insert(chunk.map(([keyId, value]) => ({
              session_id: sessionId,
              kind,
              key_id: keyId,
              value: encodeAuthValue(value)
            })))
          } ON CONFLICT (session_id, kind, key_id) DO UPDATE SET value = excluded.value`
        ), { discard: true })

    /** Every connect reads its creds: the sessions a restore connects together share a query. */
    const readCredsOf = yield* readTogether({
      readMany: (sessionIds: ReadonlyArray<string>) =>
        sql<{ readonly session_id: string; readonly value: string }>`SELECT session_id, value FROM engine_auth
          WHERE session_id IN ${sql.in(sessionIds)} AND kind = ${CREDS} AND key_id = ${CREDS}`.pipe(
          Effect.map((rows) => new Map(rows.map((row) => [row.session_id, Option.some(decodeAuthValue(row.value))] as const))),
          orStoreUnavailable
        ),
      absent: Option.none<unknown>(),
      maxKeys: 500
    })

    const getKeys = Effect.fnUntraced(
      function*(sessionId: string, type: string, ids: ReadonlyArray<string>) {
        if (ids.length === 0) return {}
        const rows = yield* sql<{ readonly key_id: string; readonly value: string }>`SELECT key_id, value
          FROM engine_auth WHERE session_id = ${sessionId} AND kind = ${type} AND key_id IN ${sql.in(ids)}`
        return Object.fromEntries(rows.map((row) => [row.key_id, decodeAuthValue(row.value)]))
      },
      orStoreUnavailable
    )

    /** One transaction: a failure anywhere (bad value, SQL error) leaves every key as it was. */
    const setKeys = Effect.fnUntraced(
      function*(sessionId: string, changes: Record<string, Record<string, unknown | null>>) {
        for (const [type, entries] of Object.entries(changes)) {
          // `undefined` deletes too, as in Baileys' own stores.
          const [deletions, writes] = Arr.partition(Object.entries(entries), ([, value]) => value != null)
          if (deletions.length > 0) {
            yield* sql`DELETE FROM engine_auth WHERE session_id = ${sessionId} AND kind = ${type}
              AND key_id IN ${sql.in(deletions.map(([keyId]) => keyId))}`
          }
          yield* upsert(sessionId, type, writes)
        }
      },
      sql.withTransaction,
      orStoreUnavailable
    )

    const writeCreds = storeOperation((sessionId: string, creds: unknown) => upsert(sessionId, CREDS, [[CREDS, creds]]))

    const clear = (sessionId: string) =>
      sql`DELETE FROM engine_auth WHERE session_id = ${sessionId}`.pipe(
        Effect.asVoid,
        orStoreUnavailable,
        Effect.withSpan("AuthRepo.clear")
      )

    /**
     * A session's credentials and keys. Its operations live on the prototype and make their
     * effects when used: every running session holds one for as long as it runs, and the
     * statements and effects made up front were ~1 KB per session (issue 19).
     */
    class SessionAuth implements AuthState {
      constructor(private readonly sessionId: string) {}
      get readCreds() {
        return readCredsOf(this.sessionId)
      }
      get clear() {
        return clear(this.sessionId)
      }
      writeCreds(creds: unknown) {
        return writeCreds(this.sessionId, creds)
      }
      getKeys(type: string, ids: ReadonlyArray<string>) {
        return getKeys(this.sessionId, type, ids)
      }
      setKeys(changes: Record<string, Record<string, unknown | null>>) {
        return setKeys(this.sessionId, changes)
      }
    }

    const forSession = (sessionId: string): AuthState => new SessionAuth(sessionId)

    return { forSession } as const
  })
)
